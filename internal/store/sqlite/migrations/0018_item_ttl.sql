-- Item TTLs of the LangGraph Store API. ttl_minutes is how long an item
-- lives after it is put or last read, in minutes (NULL: it does not
-- expire); expires_at, Unix nanoseconds, is when it expires. Reads skip
-- the items whose expires_at has passed, and a periodic sweep deletes
-- them; the index holds only the items that expire, so that the sweep
-- reads nothing when none do.
ALTER TABLE store_items ADD COLUMN ttl_minutes REAL;
ALTER TABLE store_items ADD COLUMN expires_at INTEGER;
CREATE INDEX store_items_expiry ON store_items(expires_at) WHERE expires_at IS NOT NULL;
