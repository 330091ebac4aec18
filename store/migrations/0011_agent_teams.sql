-- 0011: teams (issue 19): an agent may call other agents as tools. Its
-- members are kept by agent ID, in the order chosen (position); deleting
-- either agent removes the membership.
CREATE TABLE agent_team (
	agent_id  TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	member_id TEXT    NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	position  INTEGER NOT NULL,
	PRIMARY KEY (agent_id, member_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX agent_team_member ON agent_team (member_id);

-- A member's conversation is linked to the turn of the agent that called
-- it: the parent conversation (its deletion deletes the sub-conversation)
-- and the parent turn. Both NULL for conversations a client or the
-- desktop started.
ALTER TABLE conversations ADD COLUMN parent_conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE;
ALTER TABLE conversations ADD COLUMN parent_turn_id TEXT;
CREATE INDEX conversations_parent_turn ON conversations (parent_turn_id) WHERE parent_turn_id IS NOT NULL;
CREATE INDEX conversations_parent ON conversations (parent_conversation_id) WHERE parent_conversation_id IS NOT NULL;
