-- audit: the audit log (see the SQLite migration of the same name).
CREATE TABLE audit (
	id        bigserial PRIMARY KEY,
	at        bigint NOT NULL,
	action    text NOT NULL,
	thread_id text NOT NULL DEFAULT '',
	user_name text NOT NULL DEFAULT '',
	service   boolean NOT NULL DEFAULT false,
	outcome   text NOT NULL DEFAULT '',
	detail    text NOT NULL DEFAULT '{}'
);
