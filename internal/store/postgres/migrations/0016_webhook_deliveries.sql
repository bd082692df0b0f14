-- Webhook deliveries: the outbox of the webhooks run requests ask for
-- (see the SQLite migration *_webhook_deliveries.sql). Replicas claiming
-- due rows at once skip each other's locked rows; the partial due index
-- holds only the pending rows, so that a poll with nothing due reads
-- nothing.
CREATE TABLE webhook_deliveries (
	run_id       text PRIMARY KEY,
	thread       bigint NOT NULL, -- threads.pk
	thread_id    text NOT NULL,
	url          text NOT NULL,
	payload      text NOT NULL,
	status       text NOT NULL,
	attempts     integer NOT NULL,
	max_attempts integer NOT NULL,
	code         integer NOT NULL,
	error        text NOT NULL,
	next_at      bigint NOT NULL,
	claimed_by   bigint NOT NULL,
	created_at   bigint NOT NULL,
	updated_at   bigint NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_thread ON webhook_deliveries(thread);
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries(updated_at) WHERE status <> 'pending';
