-- 0021: the embeddings of Store items, for search by meaning (store:
-- index: in dawn.yaml). An item has one vector per indexed field (path is
-- the field's JSON path, or "$" for the whole value); vector is its
-- little-endian float32 components, scaled to length 1, so that a dot
-- product is the cosine. digest is a hash of the embedding model, the
-- dimensions and the text: a put whose text has not changed keeps its
-- vector without asking the model again. The trigger deletes an item's
-- vectors with the item, however it goes (a delete, an expiry sweep).
CREATE TABLE store_item_vectors (
	namespace TEXT NOT NULL,
	key       TEXT NOT NULL,
	path      TEXT NOT NULL,
	digest    TEXT NOT NULL,
	vector    BLOB NOT NULL,
	PRIMARY KEY (namespace, key, path)
) WITHOUT ROWID;
CREATE TRIGGER store_item_vectors_gone AFTER DELETE ON store_items BEGIN
	DELETE FROM store_item_vectors WHERE namespace = OLD.namespace AND key = OLD.key;
END;
