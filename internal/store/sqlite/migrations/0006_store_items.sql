-- 0006: the key-value store of the LangGraph Store API (PUT /store/items,
-- POST /store/items/search...). namespace is the item's labels, each
-- followed by the unit separator U+001F, so that the namespaces under a
-- prefix are the rows whose namespace begins with the prefix's encoding;
-- value is a JSON object.
CREATE TABLE store_items (
	namespace  TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
