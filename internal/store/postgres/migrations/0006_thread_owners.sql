-- 0006: owners of threads and crons (see the SQLite migration
-- 0009_thread_owners.sql): '' is no user.
ALTER TABLE threads ADD COLUMN owner text NOT NULL DEFAULT '';
ALTER TABLE crons ADD COLUMN owner text NOT NULL DEFAULT '';
CREATE INDEX threads_by_owner ON threads(owner, updated_at);
