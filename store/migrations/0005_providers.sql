-- 0005: providers (issue 15). A provider is a named connection to a model
-- server; its API key is in the keychain, never here. Every store starts
-- with the provider "ollama", whose empty address means the Ollama
-- setting's (or OLLAMA_HOST, or the default), where agents ran before;
-- those agents now run on it.
CREATE TABLE providers (
	name       TEXT    PRIMARY KEY,
	kind       TEXT    NOT NULL CHECK (kind IN ('ollama', 'openai-compatible', 'openai', 'anthropic')),
	base_url   TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
INSERT INTO providers (name, kind, base_url, created_at, updated_at)
	VALUES ('ollama', 'ollama', '', 0, 0);
ALTER TABLE agents ADD COLUMN provider TEXT NOT NULL DEFAULT '';
UPDATE agents SET backend = 'provider' WHERE backend = 'ollama';
UPDATE agents SET provider = 'ollama';
-- How many of the oldest messages a turn's model did not see, so that
-- the transcript can say so.
ALTER TABLE turns ADD COLUMN trimmed INTEGER NOT NULL DEFAULT 0;
