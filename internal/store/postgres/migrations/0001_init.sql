-- 0001: the Postgres store, with the same tables as the SQLite store at
-- its migration 0004 (see ../migrations): threads with their latest
-- checkpoint, runs, one history table for messages (run 0), state-field
-- parts (run -1) and run events (run = runs.pk), and owners with leases.
-- Times of threads and runs are Unix nanoseconds; leases use the
-- database's clock (timestamptz), so replicas never compare their own.

CREATE TABLE threads (
	pk            bigserial PRIMARY KEY,
	id            text NOT NULL UNIQUE,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL,
	status        text NOT NULL,
	metadata      text NOT NULL,
	step          bigint NOT NULL DEFAULT 0,
	message_count bigint NOT NULL DEFAULT 0,
	run_id        text NOT NULL DEFAULT '',
	route         text NOT NULL DEFAULT '',
	checkpoint_at bigint NOT NULL DEFAULT 0,
	state         text NOT NULL DEFAULT '{}',
	parts         text NOT NULL DEFAULT '{}'
);

-- owner is owners.pk of the replica that started the run.
CREATE TABLE runs (
	pk         bigserial PRIMARY KEY,
	id         text NOT NULL,
	thread     bigint NOT NULL, -- threads.pk
	route      text NOT NULL,
	status     text NOT NULL,
	error      text NOT NULL DEFAULT '',
	output     text,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL,
	owner      bigint NOT NULL
);
CREATE UNIQUE INDEX runs_by_id ON runs(id);
CREATE INDEX runs_by_thread ON runs(thread);
-- At most one running run per thread, whichever replica starts it: the
-- database refuses the second (StartRun and BeginRun report ErrBusy).
-- It also keeps recovery's scan to the runs that are running.
CREATE UNIQUE INDEX runs_running ON runs(thread) WHERE status = 'running';

-- data is the message or part JSON, or the event JSON in codec (0 plain,
-- 1 DEFLATE).
CREATE TABLE history (
	thread bigint NOT NULL,
	run    bigint NOT NULL,
	seq    bigint NOT NULL,
	type   text,
	codec  smallint NOT NULL DEFAULT 0,
	data   bytea NOT NULL,
	PRIMARY KEY (thread, run, seq)
);

-- One row per open store (replica). A run whose owner row is gone was
-- cut off: RecoverInterrupted removes the rows whose lease has expired.
CREATE TABLE owners (
	pk         bigserial PRIMARY KEY,
	pid        integer NOT NULL,
	host       text NOT NULL,
	started_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL
);
