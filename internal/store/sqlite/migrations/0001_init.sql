-- 0001: threads with their latest checkpoint, runs, messages and run events.
-- Times are Unix nanoseconds (UTC). JSON is stored compact as TEXT.
-- Small rows keyed by text, so every table is WITHOUT ROWID: no hidden rowid
-- index beside the primary key.

-- A thread row also holds the thread's latest checkpoint (the columns from
-- step on), so that saving a step rewrites one row for both. message_count
-- is how many messages the checkpoint covers: a reader never picks up the
-- messages of a later step it has not seen the checkpoint of.
CREATE TABLE threads (
	id            TEXT PRIMARY KEY,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	status        TEXT NOT NULL,
	metadata      TEXT NOT NULL,
	step          INTEGER NOT NULL DEFAULT 0,
	message_count INTEGER NOT NULL DEFAULT 0,
	run_id        TEXT NOT NULL DEFAULT '',
	route         TEXT NOT NULL DEFAULT '',
	checkpoint_at INTEGER NOT NULL DEFAULT 0,
	state         TEXT NOT NULL DEFAULT '{}'
) WITHOUT ROWID;

CREATE TABLE runs (
	id         TEXT PRIMARY KEY,
	thread_id  TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
	route      TEXT NOT NULL,
	status     TEXT NOT NULL,
	error      TEXT NOT NULL DEFAULT '',
	output     TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Lists a thread's runs newest first, and serves the delete cascade.
CREATE INDEX runs_by_thread ON runs(thread_id, created_at);

-- At most one running run per thread, even across processes; it also keeps
-- the start-up recovery scan to the runs that are still running.
CREATE UNIQUE INDEX runs_running ON runs(thread_id) WHERE status = 'running';

-- Append-only history; seq counts from 0 within a thread.
CREATE TABLE messages (
	thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	data      TEXT NOT NULL,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;

CREATE TABLE events (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	id     INTEGER NOT NULL,
	type   TEXT NOT NULL,
	data   TEXT NOT NULL,
	PRIMARY KEY (run_id, id)
) WITHOUT ROWID;
