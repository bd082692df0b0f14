-- assistants: configured variants of a graph (a route). assistants holds
-- each assistant at its current version; assistant_versions every
-- version kept, the current one included.
CREATE TABLE assistants (
	id          TEXT PRIMARY KEY,
	version     INTEGER NOT NULL,
	graph_id    TEXT NOT NULL,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	config      TEXT NOT NULL DEFAULT '{}',
	context     TEXT NOT NULL DEFAULT '{}',
	metadata    TEXT NOT NULL DEFAULT '{}',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX assistants_graph ON assistants (graph_id);
CREATE TABLE assistant_versions (
	id          TEXT NOT NULL,
	version     INTEGER NOT NULL,
	graph_id    TEXT NOT NULL,
	name        TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	config      TEXT NOT NULL DEFAULT '{}',
	context     TEXT NOT NULL DEFAULT '{}',
	metadata    TEXT NOT NULL DEFAULT '{}',
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (id, version)
) WITHOUT ROWID;
