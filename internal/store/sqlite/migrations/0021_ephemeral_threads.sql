-- Ephemeral threads: a thread made for one run (the new thread of a
-- cron's tick) is deleted once that run is done. The mark is kept with
-- the thread when it is created, so that any server's sweep deletes it,
-- also when the server that ran it died first. delete_after, Unix
-- nanoseconds, is when a sweep looks at the thread next (NULL: the thread
-- is not ephemeral); a sweep that finds it still needed (a run running or
-- queued, or an interrupt a person must answer) moves it later. The
-- partial index holds only the ephemeral threads, so that a sweep reads
-- nothing when there are none.
ALTER TABLE threads ADD COLUMN delete_after INTEGER;
CREATE INDEX threads_delete_after ON threads(delete_after) WHERE delete_after IS NOT NULL;
