-- 0003: the key-value store of the LangGraph Store API (see the SQLite
-- migration 0006_store_items.sql for the namespace encoding).
CREATE TABLE store_items (
	namespace  text NOT NULL,
	key        text NOT NULL,
	value      text NOT NULL,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL,
	PRIMARY KEY (namespace, key)
);
