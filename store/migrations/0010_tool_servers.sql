-- 0010: the person's MCP servers as agents' tools (issue 19). A tool
-- server is a command Deskhand runs (stdio) or a Streamable HTTP URL. Its
-- secret environment variables and headers are only NAMED here: their
-- values are in the keychain. Lists and maps are JSON text.
CREATE TABLE tool_servers (
	name           TEXT    PRIMARY KEY,
	command        TEXT    NOT NULL DEFAULT '',
	args           TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
	env            TEXT    NOT NULL DEFAULT '{}', -- JSON object: non-secret values
	dir            TEXT    NOT NULL DEFAULT '',
	url            TEXT    NOT NULL DEFAULT '',
	headers        TEXT    NOT NULL DEFAULT '{}', -- JSON object: non-secret values
	secret_env     TEXT    NOT NULL DEFAULT '[]', -- JSON array of names
	secret_headers TEXT    NOT NULL DEFAULT '[]', -- JSON array of names
	allow_sampling INTEGER NOT NULL DEFAULT 0 CHECK (allow_sampling IN (0, 1)),
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL
) STRICT;

-- An agent's attachment of a server: all its tools, or the chosen ones.
-- Deleting the agent or the server removes it.
CREATE TABLE agent_tool_servers (
	agent_id  TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	server    TEXT    NOT NULL REFERENCES tool_servers (name) ON DELETE CASCADE,
	all_tools INTEGER NOT NULL CHECK (all_tools IN (0, 1)),
	PRIMARY KEY (agent_id, server)
) STRICT;

-- Each tool of an attachment: "ask me first", and the hash of its
-- definition when the person attached it (or looked again), with that
-- definition (JSON text) to show what changed.
CREATE TABLE agent_tool_server_tools (
	agent_id    TEXT    NOT NULL,
	server      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	ask_first   INTEGER NOT NULL CHECK (ask_first IN (0, 1)),
	pinned_hash TEXT    NOT NULL DEFAULT '',
	pinned_definition TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (agent_id, server, tool),
	FOREIGN KEY (agent_id, server) REFERENCES agent_tool_servers (agent_id, server) ON DELETE CASCADE
) STRICT;
