-- 0005: app-wide values capabilities keep across threads, such as a
-- person's "always allow this tool" decision. Keyed by a name the
-- capability chooses ("approval.always.deployProd"); value is JSON.
CREATE TABLE app_values (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
) WITHOUT ROWID;
