-- 0010: checkpoints kept for every step, and branches of a thread's messages
-- (see the SQLite migration of the same name).
ALTER TABLE threads ADD COLUMN head bigint NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN branch bigint NOT NULL DEFAULT 0;
-- copy_of is the thread a copy was made from (its first one, for a copy of
-- a copy): its messages keep the names they had there.
ALTER TABLE threads ADD COLUMN copy_of text NOT NULL DEFAULT '';
UPDATE threads SET head = step;

CREATE TABLE checkpoints (
	thread        bigint NOT NULL, -- threads.pk
	step          bigint NOT NULL,
	parent        bigint NOT NULL,
	branch        bigint NOT NULL,
	message_count bigint NOT NULL,
	input_count   bigint NOT NULL DEFAULT 0,
	run_id        text NOT NULL,
	route         text NOT NULL,
	source        text NOT NULL,
	state         text NOT NULL,
	parts         text NOT NULL,
	created_at    bigint NOT NULL,
	PRIMARY KEY (thread, step)
);

INSERT INTO checkpoints(thread, step, parent, branch, message_count, run_id, route, source, state, parts, created_at)
	SELECT pk, step, 0, 0, message_count, run_id, route, 'loop', state, parts, checkpoint_at FROM threads WHERE step > 0;

CREATE TABLE branches (
	thread bigint NOT NULL,
	branch bigint NOT NULL,
	key    bigint NOT NULL,
	lo     bigint NOT NULL,
	hi     bigint NOT NULL
);
CREATE INDEX branches_by_branch ON branches(thread, branch, lo);
