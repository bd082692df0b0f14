-- 0011: queued runs, the runs a thread takes in turn once it is free
-- (multitask_strategy "enqueue", and runs delayed by after_seconds). The
-- head of a thread's queue is its row with the least (not_before, pk);
-- a server starts it by deleting the row in the transaction that inserts
-- the run, so each queued run starts once however many servers share the
-- database.
CREATE TABLE queued_runs (
	pk         INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	thread     INTEGER NOT NULL, -- threads.pk
	route      TEXT NOT NULL,
	request    TEXT NOT NULL,
	not_before INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX queued_runs_by_thread ON queued_runs (thread, not_before, pk);
CREATE INDEX queued_runs_due ON queued_runs (not_before);
