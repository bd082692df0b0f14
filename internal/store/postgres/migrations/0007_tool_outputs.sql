-- 0007: tool outputs stored with their thread (see the SQLite migration
-- 0010_tool_outputs.sql).
CREATE TABLE tool_outputs (
	thread     bigint NOT NULL, -- threads.pk
	id         text NOT NULL,
	tool       text NOT NULL,
	data       bytea NOT NULL,
	created_at bigint NOT NULL,
	PRIMARY KEY (thread, id)
);
