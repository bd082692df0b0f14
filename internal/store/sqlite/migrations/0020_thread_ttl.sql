-- Thread TTLs of the LangGraph dialect. ttl is how long a thread lives
-- after its last activity, in nanoseconds (NULL: it does not expire);
-- expires_at, Unix nanoseconds, is when it expires. Every write that
-- updates a thread's updated_at sets expires_at to that time plus ttl in
-- the same statement (NULL plus anything stays NULL), and a periodic
-- sweep deletes the expired threads; the index holds only the threads
-- that expire, so that the sweep reads nothing when none do.
ALTER TABLE threads ADD COLUMN ttl INTEGER;
ALTER TABLE threads ADD COLUMN expires_at INTEGER;
CREATE INDEX threads_expiry ON threads(expires_at) WHERE expires_at IS NOT NULL;
