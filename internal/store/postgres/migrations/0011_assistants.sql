-- assistants: configured variants of a graph (a route); see the SQLite
-- migration of the same name.
CREATE TABLE assistants (
	id          text PRIMARY KEY,
	version     integer NOT NULL,
	graph_id    text NOT NULL,
	name        text NOT NULL,
	description text NOT NULL DEFAULT '',
	config      text NOT NULL DEFAULT '{}',
	context     text NOT NULL DEFAULT '{}',
	metadata    text NOT NULL DEFAULT '{}',
	created_at  bigint NOT NULL,
	updated_at  bigint NOT NULL
);
CREATE INDEX assistants_graph ON assistants (graph_id);
CREATE TABLE assistant_versions (
	id          text NOT NULL,
	version     integer NOT NULL,
	graph_id    text NOT NULL,
	name        text NOT NULL,
	description text NOT NULL DEFAULT '',
	config      text NOT NULL DEFAULT '{}',
	context     text NOT NULL DEFAULT '{}',
	metadata    text NOT NULL DEFAULT '{}',
	created_at  bigint NOT NULL,
	updated_at  bigint NOT NULL,
	PRIMARY KEY (id, version)
);
