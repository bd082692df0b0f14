-- 0019: the embeddings of Store items, for search by meaning (see the
-- SQLite migration *_item_vectors.sql for the columns). The foreign key
-- deletes an item's vectors with the item, however it goes.
CREATE TABLE store_item_vectors (
	namespace text NOT NULL,
	key       text NOT NULL,
	path      text NOT NULL,
	digest    text NOT NULL,
	vector    bytea NOT NULL,
	PRIMARY KEY (namespace, key, path),
	FOREIGN KEY (namespace, key) REFERENCES store_items (namespace, key) ON DELETE CASCADE
);
