-- 0001: the first schema.
--
-- Times are INTEGER milliseconds since the Unix epoch (UTC); a NULL time
-- means "not yet" (ended_at, last_used_at, revoked_at). Booleans are 0/1.
-- Tables are STRICT so a value of the wrong type is an error, not a
-- silent conversion.

CREATE TABLE agents (
	id              TEXT    PRIMARY KEY,
	slug            TEXT    NOT NULL UNIQUE,
	name            TEXT    NOT NULL,
	description     TEXT    NOT NULL DEFAULT '',
	prompt          TEXT    NOT NULL DEFAULT '',
	backend         TEXT    NOT NULL,
	model           TEXT    NOT NULL DEFAULT '',
	response_schema TEXT,                           -- JSON Schema, NULL when none
	conversations   INTEGER NOT NULL DEFAULT 1 CHECK (conversations IN (0, 1)),
	enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	tools           TEXT    NOT NULL DEFAULT '[]',  -- JSON array of tool names
	max_rounds      INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
) STRICT;

-- Principals: MCP clients known by the SHA-256 of their bearer token.
CREATE TABLE clients (
	id           TEXT    PRIMARY KEY,
	name         TEXT    NOT NULL,
	token_hash   BLOB    NOT NULL,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,
	revoked_at   INTEGER
) STRICT;

-- A revoked client's name may be reused; two active clients may not share one.
CREATE UNIQUE INDEX clients_active_name ON clients (name) WHERE revoked_at IS NULL;

CREATE TABLE conversations (
	id         TEXT    PRIMARY KEY,
	agent_id   TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	principal  TEXT    NOT NULL,
	title      TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX conversations_principal_updated ON conversations (principal, updated_at);
CREATE INDEX conversations_agent ON conversations (agent_id);

-- A turn is one call of an agent (a run): the user message and what the
-- agent did to answer it.
CREATE TABLE turns (
	id              TEXT    PRIMARY KEY,
	conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	agent_id        TEXT    NOT NULL,
	principal       TEXT    NOT NULL,
	status          TEXT    NOT NULL
		CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
	model           TEXT    NOT NULL DEFAULT '',
	started_at      INTEGER NOT NULL,
	ended_at        INTEGER,
	duration_ms     INTEGER NOT NULL DEFAULT 0,
	prompt_tokens   INTEGER NOT NULL DEFAULT 0,
	output_tokens   INTEGER NOT NULL DEFAULT 0,
	tool_calls      INTEGER NOT NULL DEFAULT 0,
	error           TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX turns_status ON turns (status);
CREATE INDEX turns_conversation_started ON turns (conversation_id, started_at);

-- The transcript, in insertion order (id).
CREATE TABLE messages (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	turn_id         TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
	role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
	content         TEXT    NOT NULL DEFAULT '',
	tool_calls      TEXT,                           -- JSON array, NULL when none
	tool_call_id    TEXT    NOT NULL DEFAULT '',
	tool_name       TEXT    NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_conversation ON messages (conversation_id, id);
CREATE INDEX messages_turn ON messages (turn_id);

CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
