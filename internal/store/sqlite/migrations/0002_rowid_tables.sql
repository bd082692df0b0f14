-- 0002: rowid tables, and one history table for messages and events.
--
-- In 0001 every table was WITHOUT ROWID and keyed by text ids, mostly
-- random UUIDs. New rows landed at random places in their b-tree, which
-- split pages and left them a third full, and a row over about 1 KB (a
-- tool result, a done event) spilled into a mostly empty overflow page.
-- Rowid tables append each new row at the end, keep rows of up to about
-- 4 KB on their page, and look text ids up through small indexes. Children
-- point to their parent's integer pk.
--
-- Every commit writes each page it touched to the WAL, so a step should
-- touch few pages: a thread's messages and its runs' events live in one
-- history table with one index, and a step appends to one page of each.
--
-- There are no foreign keys: DeleteThread deletes a thread's history and
-- runs itself, and every write goes through the store.
--
-- Rows of an older store are copied over, so it keeps working.

CREATE TABLE threads_v2 (
	pk            INTEGER PRIMARY KEY,
	id            TEXT NOT NULL,
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
);
INSERT INTO threads_v2(id, created_at, updated_at, status, metadata, step, message_count, run_id, route, checkpoint_at, state)
	SELECT id, created_at, updated_at, status, metadata, step, message_count, run_id, route, checkpoint_at, state
	FROM threads ORDER BY created_at, id;

CREATE TABLE runs_v2 (
	pk         INTEGER PRIMARY KEY,
	id         TEXT NOT NULL,
	thread     INTEGER NOT NULL, -- threads.pk
	route      TEXT NOT NULL,
	status     TEXT NOT NULL,
	error      TEXT NOT NULL DEFAULT '',
	output     TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
INSERT INTO runs_v2(id, thread, route, status, error, output, created_at, updated_at)
	SELECT r.id, t.pk, r.route, r.status, r.error, r.output, r.created_at, r.updated_at
	FROM runs r JOIN threads_v2 t ON t.id = r.thread_id ORDER BY r.created_at, r.id;

-- A row is one of the thread's messages when run is 0 (seq counts from 0
-- within the thread, type is NULL), else one event of that run (runs.pk;
-- seq is the event id). codec says how data holds the JSON: 0 as it is
-- (TEXT), 1 compressed with DEFLATE (a BLOB). Only events are compressed.
CREATE TABLE history (
	pk     INTEGER PRIMARY KEY,
	thread INTEGER NOT NULL, -- threads.pk
	run    INTEGER NOT NULL,
	seq    INTEGER NOT NULL,
	type   TEXT,
	codec  INTEGER NOT NULL DEFAULT 0,
	data   BLOB NOT NULL
);
INSERT INTO history(thread, run, seq, data)
	SELECT t.pk, 0, m.seq, m.data
	FROM messages m JOIN threads_v2 t ON t.id = m.thread_id ORDER BY t.pk, m.seq;
INSERT INTO history(thread, run, seq, type, data)
	SELECT r.thread, r.pk, e.id, e.type, e.data
	FROM events e JOIN runs_v2 r ON r.id = e.run_id ORDER BY r.pk, e.id;

DROP TABLE events;
DROP TABLE messages;
DROP TABLE runs;
DROP TABLE threads;
ALTER TABLE threads_v2 RENAME TO threads;
ALTER TABLE runs_v2 RENAME TO runs;

CREATE UNIQUE INDEX threads_by_id ON threads(id);
CREATE UNIQUE INDEX runs_by_id ON runs(id);
-- Lists a thread's runs, and finds them when the thread is deleted.
CREATE INDEX runs_by_thread ON runs(thread);
-- At most one running run per thread, even across processes; it also keeps
-- the start-up recovery scan to the runs that are still running.
CREATE UNIQUE INDEX runs_running ON runs(thread) WHERE status = 'running';
-- A thread's messages in order, then each run's events in order.
CREATE UNIQUE INDEX history_by_thread ON history(thread, run, seq);
