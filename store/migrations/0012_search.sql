-- 0012: full-text search over every conversation (issue 20).
--
-- An FTS4 index (compiled into go-sqlite3 by default) over what a person
-- reads: the text of user and assistant messages. System prompts and tool
-- calls and results are left out: tool results can be whole fetched pages
-- or files, which would swell the index for text nobody wrote or read in
-- the conversation.
--
-- The index holds no copy of the text (content="messages"): snippets are
-- cut from messages.content by docid (= messages.id). unicode61 folds case
-- and, with remove_diacritics=1, accents, so "cafe" finds "Café".
-- matchinfo=fts3 leaves out the per-document sizes that only ranking
-- functions read: fewer rows to write per message.
CREATE VIRTUAL TABLE messages_fts USING fts4(
	content="messages",
	content,
	matchinfo=fts3,
	tokenize=unicode61 "remove_diacritics=1"
);

-- The index is written by the store's writer in batches, not in the
-- transaction of each turn (an FTS segment per commit made every append
-- about 50% slower): messages up to indexed_upto (a messages.id) are in
-- it, newer ones wait for the next batch, which a search runs first.
CREATE TABLE messages_fts_state (
	id           INTEGER PRIMARY KEY CHECK (id = 1),
	indexed_upto INTEGER NOT NULL
) STRICT;

-- A message leaves the index when it is deleted (a deleted conversation's
-- or agent's messages go by ON DELETE CASCADE, which fires this too) and
-- is indexed again when its text or role changes, should that ever
-- happen; only messages already indexed, since the batch will take the
-- others as they are then.
CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages
WHEN old.role IN ('user', 'assistant') AND old.id <= (SELECT indexed_upto FROM messages_fts_state)
BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_before_update BEFORE UPDATE OF content, role ON messages
WHEN old.role IN ('user', 'assistant') AND old.id <= (SELECT indexed_upto FROM messages_fts_state)
BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF content, role ON messages
WHEN new.role IN ('user', 'assistant') AND new.id <= (SELECT indexed_upto FROM messages_fts_state)
BEGIN
	INSERT INTO messages_fts (docid, content) VALUES (new.id, new.content);
END;

-- The history stored before this migration is indexed now. ('rebuild'
-- must never be run on the index: it would take every row of messages,
-- tool results included.)
INSERT INTO messages_fts (docid, content)
	SELECT id, content FROM messages WHERE role IN ('user', 'assistant');
INSERT INTO messages_fts_state (id, indexed_upto) SELECT 1, COALESCE(MAX(id), 0) FROM messages;
