-- 0016: threads_by_owner holds only threads that have an owner. A thread
-- made without authentication has owner '', no search looks for it by
-- owner, and every step moves its updated_at: in the full index that moved
-- its entry, one more page written by every commit of its runs.
DROP INDEX threads_by_owner;
CREATE INDEX threads_by_owner ON threads(owner, updated_at) WHERE owner <> '';
