-- 0008: queued runs, the runs a thread takes in turn once it is free (see
-- the SQLite migration 0011_queued_runs.sql): a server starts the head of
-- a thread's queue by deleting its row in the transaction that inserts
-- the run.
CREATE TABLE queued_runs (
	pk         bigserial PRIMARY KEY,
	id         text NOT NULL UNIQUE,
	thread     bigint NOT NULL, -- threads.pk
	route      text NOT NULL,
	request    text NOT NULL,
	not_before bigint NOT NULL,
	created_at bigint NOT NULL
);
CREATE INDEX queued_runs_by_thread ON queued_runs (thread, not_before, pk);
CREATE INDEX queued_runs_due ON queued_runs (not_before);
