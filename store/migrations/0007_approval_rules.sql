-- 0007: approval rules that stick (issue 17). An approval answered
-- "always allow" becomes a rule: the agent may run the tool without
-- asking, optionally only for one client, inside one folder or on one
-- host. Rules go with their agent; revoking one deletes it.
CREATE TABLE approval_rules (
	id         TEXT    PRIMARY KEY,
	agent_id   TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	tool       TEXT    NOT NULL,
	client_id  TEXT    NOT NULL DEFAULT '', -- a principal; '' for every client
	folder     TEXT    NOT NULL DEFAULT '', -- absolute, links resolved; '' for any path
	host       TEXT    NOT NULL DEFAULT '', -- lower case; '' for any host
	created_at INTEGER NOT NULL,            -- Unix milliseconds
	created_by TEXT    NOT NULL CHECK (created_by IN ('client', 'desktop'))
) STRICT;

CREATE INDEX approval_rules_agent_tool ON approval_rules (agent_id, tool);

-- An approval that a rule gave without asking is kept as a question
-- answered by that rule: rule_id names it (the rule may since be revoked),
-- and answered_by stays '' (0002's check admits only people).
ALTER TABLE questions ADD COLUMN rule_id TEXT NOT NULL DEFAULT '';
