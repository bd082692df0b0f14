-- 0009: owners of threads and crons. owner is the user who created the
-- thread (or cron) while the server had authentication: a user sees only
-- the threads they own, the service credential every thread. '' is no
-- user: a thread created without authentication or by the service. A
-- thread's runs, events, checkpoints and interrupts belong to its owner
-- through the thread.
ALTER TABLE threads ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE crons ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX threads_by_owner ON threads(owner, updated_at);
