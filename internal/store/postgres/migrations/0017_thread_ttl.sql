-- Thread TTLs of the LangGraph dialect (see the SQLite migration
-- *_thread_ttl.sql): ttl, nanoseconds, NULL for a thread that does not
-- expire; expires_at is Unix nanoseconds. The partial index holds only
-- the threads that expire, so that a sweep finds nothing to do cheaply;
-- replicas sweeping at once skip each other's locked rows.
ALTER TABLE threads ADD COLUMN ttl bigint, ADD COLUMN expires_at bigint;
CREATE INDEX threads_expiry ON threads(expires_at) WHERE expires_at IS NOT NULL;
