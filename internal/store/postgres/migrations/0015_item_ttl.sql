-- Item TTLs of the LangGraph Store API (see the SQLite migration
-- *_item_ttl.sql): ttl_minutes NULL means the item does not expire;
-- expires_at is Unix nanoseconds. The partial index holds only the items
-- that expire, so that a sweep finds nothing to do cheaply; replicas
-- sweeping at once skip each other's locked rows.
ALTER TABLE store_items ADD COLUMN ttl_minutes double precision, ADD COLUMN expires_at bigint;
CREATE INDEX store_items_expiry ON store_items(expires_at) WHERE expires_at IS NOT NULL;
