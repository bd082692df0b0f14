-- 0018: where an owner's pid means something (host_key: host name, boot id
-- and pid namespace) and when its process started (proc_start), as the
-- SQLite store keeps them (its 0003_owners.sql). A replica that restarts on
-- the same machine and pid namespace sees that its previous incarnation's
-- pid no longer names that process, and ends its runs at once instead of
-- waiting for its lease; replicas elsewhere have another host_key and are
-- judged by their lease alone. '' is a row from before this migration,
-- never judged by its pid.
ALTER TABLE owners ADD COLUMN host_key text NOT NULL DEFAULT '';
ALTER TABLE owners ADD COLUMN proc_start text NOT NULL DEFAULT '';
