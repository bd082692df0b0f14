-- 0013: every committed step is a checkpoint, kept after the next one: a thread's
-- history can be read at any step, and a run may start a new branch from
-- an earlier checkpoint (a fork).
--
-- A checkpoint is named by its thread and its step; steps count up within
-- the thread across all its branches, so they never repeat. Its row holds
-- the small state values and the parts metadata as the thread row held them
-- then, and refers to its messages by count: the first message_count
-- messages of its branch.
--
-- Messages live in history as before. A branch is a history run key: 0 for
-- the thread's first branch, -2, -3, ... for the branches forks make (-1
-- holds state-field parts). A branch stores only the messages it added; the
-- ones before its fork point are its parent's, listed in branches as
-- segments: (key, lo, hi) says messages lo..hi-1 of the branch are the rows
-- of that key. A thread that was never forked has no segments, so reading
-- its latest checkpoint costs what it did.
--
-- threads.head is the checkpoint the next step follows (the thread's
-- latest, or the one a fork started from); threads.step stays the highest
-- step, so new steps keep counting up.
--
-- The first step of a run also stands for the checkpoint before it, where
-- the run's input was added and the model had not answered yet: its
-- input_count is the number of messages then (0 when the step took no
-- input). That checkpoint is numbered as its step with bit 46 set, in
-- threads.head and checkpoints.parent too.
ALTER TABLE threads ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN branch INTEGER NOT NULL DEFAULT 0;
-- copy_of is the thread a copy was made from (its first one, for a copy of
-- a copy): its messages keep the names they had there.
ALTER TABLE threads ADD COLUMN copy_of TEXT NOT NULL DEFAULT '';
UPDATE threads SET head = step;

--
-- checkpoints is keyed by (thread, step) WITHOUT ROWID: one b-tree, so a
-- step writes one more row on one page rather than a row and an index
-- entry on two.
CREATE TABLE checkpoints (
	thread        INTEGER NOT NULL, -- threads.pk
	step          INTEGER NOT NULL,
	parent        INTEGER NOT NULL, -- step of the parent checkpoint; 0 for none
	branch        INTEGER NOT NULL,
	message_count INTEGER NOT NULL,
	input_count   INTEGER NOT NULL DEFAULT 0, -- see below
	run_id        TEXT NOT NULL,
	route         TEXT NOT NULL,
	source        TEXT NOT NULL, -- loop, update, fork or input
	state         TEXT NOT NULL,
	parts         TEXT NOT NULL,
	created_at    INTEGER NOT NULL,
	PRIMARY KEY (thread, step)
) WITHOUT ROWID;

-- The latest checkpoint of every existing thread.
INSERT INTO checkpoints(thread, step, parent, branch, message_count, run_id, route, source, state, parts, created_at)
	SELECT pk, step, 0, 0, message_count, run_id, route, 'loop', state, parts, checkpoint_at FROM threads WHERE step > 0;

CREATE TABLE branches (
	thread INTEGER NOT NULL, -- threads.pk
	branch INTEGER NOT NULL,
	key    INTEGER NOT NULL,
	lo     INTEGER NOT NULL,
	hi     INTEGER NOT NULL
);
CREATE INDEX branches_by_branch ON branches(thread, branch, lo);
