-- 0006: which agents each client may see (issue 17). A client sees every
-- agent (agents_limited = 0, every client before this change) or only the
-- agents listed for it in client_agents, kept by agent ID so that a rename
-- changes nothing; deleting an agent drops it from every list.
ALTER TABLE clients ADD COLUMN agents_limited INTEGER NOT NULL DEFAULT 0 CHECK (agents_limited IN (0, 1));
CREATE TABLE client_agents (
	client_id TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
	agent_id  TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	PRIMARY KEY (client_id, agent_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX client_agents_agent ON client_agents (agent_id);
