-- Ephemeral threads (see the SQLite migration *_ephemeral_threads.sql):
-- delete_after, Unix nanoseconds, is when a sweep looks at an ephemeral
-- thread next, NULL for every other thread. The partial index holds only
-- the ephemeral threads; replicas sweeping at once skip each other's
-- locked rows.
ALTER TABLE threads ADD COLUMN delete_after bigint;
CREATE INDEX threads_delete_after ON threads(delete_after) WHERE delete_after IS NOT NULL;
