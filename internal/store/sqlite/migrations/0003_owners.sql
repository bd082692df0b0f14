-- 0003: owners and their leases, so that several processes can share a
-- store and each recovers only the runs of processes that are gone.
--
-- Every open store registers an owner row and renews its lease (expires_at)
-- while it lives; every run records the owner that started it. A run left
-- running is cut off once its owner is gone: the owner row was removed (its
-- store closed, or another recovered it), its lease expired, or it is a
-- process on the same machine (same host_key) whose pid no longer names the
-- process that registered (proc_start).
--
-- AUTOINCREMENT: an owner pk is never handed out twice, so a run of a gone
-- owner never passes for a run of a new one.
CREATE TABLE owners (
	pk         INTEGER PRIMARY KEY AUTOINCREMENT,
	pid        INTEGER NOT NULL,
	host       TEXT NOT NULL, -- the host name, for people
	host_key   TEXT NOT NULL, -- where pid means something: host, boot and pid namespace
	proc_start TEXT NOT NULL, -- when the process started, where known, to tell a reused pid
	started_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
);

-- owners.pk of the process that started the run; 0 for runs from before
-- owners existed, which no live process claims.
ALTER TABLE runs ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
