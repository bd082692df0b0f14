-- 0002: app-wide values capabilities keep across threads, such as a
-- person's "always allow this tool" decision (see the SQLite migration
-- 0005_app_values.sql).
CREATE TABLE app_values (
	key        text PRIMARY KEY,
	value      text NOT NULL,
	updated_at bigint NOT NULL
);
