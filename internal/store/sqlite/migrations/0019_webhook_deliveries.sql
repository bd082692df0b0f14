-- Webhook deliveries: the outbox of the webhooks run requests ask for.
-- A run's row is written in the transaction that records its end, so a
-- run that ended never loses its delivery; any server sends the due
-- ones (pending, next_at reached) and records each attempt. thread is
-- threads.pk (deleted with the thread); claimed_by is the owner
-- (owners.pk) sending an attempt, 0 for none, and next_at, Unix
-- nanoseconds, is when the next attempt is due or, while one is claimed,
-- when the claim may be looked at again. The due index holds only the
-- pending rows, so that a poll with nothing due reads nothing; the ended
-- index serves the sweep that bounds how long ended ones are kept.
CREATE TABLE webhook_deliveries (
	run_id       TEXT PRIMARY KEY,
	thread       INTEGER NOT NULL,
	thread_id    TEXT NOT NULL,
	url          TEXT NOT NULL,
	payload      TEXT NOT NULL,
	status       TEXT NOT NULL,
	attempts     INTEGER NOT NULL,
	max_attempts INTEGER NOT NULL,
	code         INTEGER NOT NULL,
	error        TEXT NOT NULL,
	next_at      INTEGER NOT NULL,
	claimed_by   INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_thread ON webhook_deliveries(thread);
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries(updated_at) WHERE status <> 'pending';
