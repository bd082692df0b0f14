-- audit: the audit log, appended to and never changed: who (user, or the
-- service credential) did what (approval, cancel, delete, signal) to
-- which thread, when, and how it ended. id orders entries and pages them.
CREATE TABLE audit (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	at        INTEGER NOT NULL,
	action    TEXT NOT NULL,
	thread_id TEXT NOT NULL DEFAULT '',
	user_name TEXT NOT NULL DEFAULT '',
	service   INTEGER NOT NULL DEFAULT 0,
	outcome   TEXT NOT NULL DEFAULT '',
	detail    TEXT NOT NULL DEFAULT '{}'
);
