-- 0002: agents that ask people (issue 3).
--
-- Agents gain the folders their file tools may use, where their questions
-- go and how long each waits; a tool switched on for an agent becomes an
-- object that also says whether each call needs a person's approval.
-- Questions and approvals are kept with their answers.
--
-- The agents table is changed in place (ADD COLUMN, UPDATE), never
-- rebuilt: a migration runs in a transaction, where foreign keys cannot be
-- switched off, so dropping agents would cascade into every conversation.
-- So agents' stored definition keeps 0001's comment on tools ("JSON array
-- of tool names"); the format is the one below.

-- A JSON array of folder paths.
ALTER TABLE agents ADD COLUMN folders TEXT NOT NULL DEFAULT '[]';
-- Who is asked when the agent needs a person; '' is the default (client).
ALTER TABLE agents ADD COLUMN routing TEXT NOT NULL DEFAULT ''
	CHECK (routing IN ('', 'client', 'desktop', 'decline'));
-- Bound on each wait for an answer; 0 is the default.
ALTER TABLE agents ADD COLUMN question_timeout_ms INTEGER NOT NULL DEFAULT 0;

-- tools was a JSON array of tool names; it becomes a JSON array of
-- {"name": …, "needsApproval": …} objects, in the same order. An element
-- that is not a string (there should be none) is kept as it is.
UPDATE agents SET tools = (
	SELECT json_group_array(
		CASE WHEN type = 'text'
			THEN json_object('name', value, 'needsApproval', json('false'))
			ELSE value
		END
		ORDER BY key)
	FROM json_each(agents.tools)
);

-- Everything an agent's turn asked a person: questions (free text or a
-- choice) and approvals of tool calls, with how they were answered.
CREATE TABLE questions (
	id              TEXT    PRIMARY KEY,
	conversation_id TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	turn_id         TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
	agent           TEXT    NOT NULL,               -- the agent's slug when it asked
	principal       TEXT    NOT NULL,
	seq             INTEGER NOT NULL,               -- 1, 2, … within the turn
	kind            TEXT    NOT NULL CHECK (kind IN ('question', 'approval')),
	text            TEXT    NOT NULL DEFAULT '',
	choices         TEXT    NOT NULL DEFAULT '[]',  -- JSON array of strings
	tool            TEXT    NOT NULL DEFAULT '',    -- approvals: the tool to run
	arguments       TEXT,                           -- approvals: its arguments as given (raw JSON), NULL when none
	asked_at        INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL,
	status          TEXT    NOT NULL
		CHECK (status IN ('pending', 'answered', 'declined', 'expired', 'cancelled')),
	answer_text     TEXT    NOT NULL DEFAULT '',
	approve         INTEGER CHECK (approve IN (0, 1)), -- approvals answered: 0/1; else NULL
	comment         TEXT    NOT NULL DEFAULT '',
	answered_by     TEXT    NOT NULL DEFAULT '' CHECK (answered_by IN ('', 'client', 'desktop')),
	answered_at     INTEGER                         -- NULL until answered or declined
) STRICT;

CREATE INDEX questions_conversation_seq ON questions (conversation_id, seq);
CREATE INDEX questions_status ON questions (status);
CREATE INDEX questions_turn ON questions (turn_id);
