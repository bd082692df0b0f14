-- 0007: crons, runs started on a schedule. next_run_at is the tick the
-- cron fires at next (Unix nanoseconds; 0 once it has ended): a server
-- owns a tick by moving it forward with a conditional UPDATE, so each
-- tick fires once however many servers share the database.
CREATE TABLE crons (
	id               TEXT PRIMARY KEY,
	assistant_id     TEXT NOT NULL,
	thread_id        TEXT NOT NULL DEFAULT '',
	schedule         TEXT NOT NULL,
	timezone         TEXT NOT NULL DEFAULT '',
	payload          TEXT NOT NULL,
	metadata         TEXT NOT NULL DEFAULT '{}',
	on_run_completed TEXT NOT NULL DEFAULT '',
	next_run_at      INTEGER NOT NULL,
	end_time         INTEGER NOT NULL DEFAULT 0,
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL,
	enabled          INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
CREATE INDEX crons_due ON crons (next_run_at) WHERE enabled = 1;
