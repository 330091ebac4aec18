-- 0012: full-text search over every conversation (issue 20).
--
-- An FTS4 index (compiled into go-sqlite3 by default) over what a person
-- reads: the text of user and assistant messages. System prompts and tool
-- calls and results are left out: tool results can be whole fetched pages
-- or files, which would swell the index and every append for text nobody
-- wrote or read in the conversation.
--
-- The index holds no copy of the text (content="messages"): snippets are
-- cut from messages.content by rowid (= messages.id). Triggers keep it in
-- step on insert and delete (a deleted conversation's or agent's messages
-- go by ON DELETE CASCADE, which fires them too) and on an update of a
-- message's text or role, should one ever happen. Because tool messages
-- are not indexed, 'rebuild' must never be run on it (it would index
-- every row of messages); the INSERT…SELECT below indexes the history
-- stored before this migration instead.
--
-- unicode61 folds case and, with remove_diacritics=1, accents, so "cafe"
-- finds "Café".
CREATE VIRTUAL TABLE messages_fts USING fts4(
	content="messages",
	content,
	tokenize=unicode61 "remove_diacritics=1"
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.role IN ('user', 'assistant')
BEGIN
	INSERT INTO messages_fts (docid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER messages_fts_delete BEFORE DELETE ON messages
WHEN old.role IN ('user', 'assistant')
BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_before_update BEFORE UPDATE OF content, role ON messages
WHEN old.role IN ('user', 'assistant')
BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;

CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF content, role ON messages
WHEN new.role IN ('user', 'assistant')
BEGIN
	INSERT INTO messages_fts (docid, content) VALUES (new.id, new.content);
END;

INSERT INTO messages_fts (docid, content)
	SELECT id, content FROM messages WHERE role IN ('user', 'assistant');
