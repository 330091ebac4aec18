-- 0009: the activity log (issue 17). One row per MCP request and per
-- question asked or closed. Never a token, an Authorization header or a
-- provider key. arguments holds a call's arguments or a question's
-- answer, only for agents whose log_arguments is on. size approximates
-- the bytes a row takes, for retention by size (log.max_mb).
CREATE TABLE activity (
	id           INTEGER PRIMARY KEY,
	at           INTEGER NOT NULL,
	client       TEXT    NOT NULL DEFAULT '',
	era          TEXT    NOT NULL DEFAULT '',
	method       TEXT    NOT NULL DEFAULT '',
	agent        TEXT    NOT NULL DEFAULT '',
	conversation TEXT    NOT NULL DEFAULT '',
	duration_us  INTEGER NOT NULL DEFAULT 0,
	outcome      TEXT    NOT NULL,
	reason       TEXT    NOT NULL DEFAULT '',
	bytes_in     INTEGER NOT NULL DEFAULT 0,
	bytes_out    INTEGER NOT NULL DEFAULT 0,
	text         TEXT    NOT NULL DEFAULT '',
	arguments    TEXT    NOT NULL DEFAULT '',
	size         INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX activity_at ON activity (at);
ALTER TABLE agents ADD COLUMN log_arguments INTEGER NOT NULL DEFAULT 0 CHECK (log_arguments IN (0, 1));
