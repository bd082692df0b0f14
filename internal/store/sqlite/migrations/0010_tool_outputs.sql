-- 0010: tool outputs too large to show the model whole, stored with their
-- thread (threads.pk) under an id the model reads them back by; deleted
-- with the thread. data is the output's bytes, read a page at a time.
CREATE TABLE tool_outputs (
	thread     INTEGER NOT NULL, -- threads.pk
	id         TEXT NOT NULL,
	tool       TEXT NOT NULL,
	data       BLOB NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (thread, id)
) WITHOUT ROWID;
