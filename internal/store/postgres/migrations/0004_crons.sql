-- 0004: crons, runs started on a schedule (see the SQLite migration
-- 0007_crons.sql): a server owns a tick by moving next_run_at forward
-- with a conditional UPDATE.
CREATE TABLE crons (
	id               text PRIMARY KEY,
	assistant_id     text NOT NULL,
	thread_id        text NOT NULL DEFAULT '',
	schedule         text NOT NULL,
	timezone         text NOT NULL DEFAULT '',
	payload          text NOT NULL,
	metadata         text NOT NULL DEFAULT '{}',
	on_run_completed text NOT NULL DEFAULT '',
	next_run_at      bigint NOT NULL,
	end_time         bigint NOT NULL DEFAULT 0,
	created_at       bigint NOT NULL,
	updated_at       bigint NOT NULL,
	enabled          boolean NOT NULL DEFAULT true
);
CREATE INDEX crons_due ON crons (next_run_at) WHERE enabled;
