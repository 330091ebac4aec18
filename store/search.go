package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// ftsQuery turns a person's words into an FTS4 query that finds messages
// holding all of them: each word a quoted phrase (a word holds only
// letters, digits and marks, so no quote, *, -, NEAR, AND, OR or NOT in it
// is syntax), separated by spaces (AND). "" when there is no word.
func ftsQuery(text string) string {
	words := agent.SearchWords(text)
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " ")
}

// searchSQL reads the messages that match, newest first (the index's
// docid is messages.id, which grows with time), with their conversation
// and a snippet; the filters are appended to its WHERE.
const searchSQL = `SELECT m.conversation_id, m.role, m.created_at, c.agent_id, c.principal, c.title,
		snippet(messages_fts, '[', ']', '…', -1, 12)
	FROM messages_fts
	JOIN messages m ON m.id = messages_fts.docid
	JOIN conversations c ON c.id = m.conversation_id
	WHERE messages_fts MATCH ?`

// SearchMessages finds the conversations whose user or assistant messages
// hold every word of q.Text, newest message first, one hit per
// conversation (its newest message found), at most q.Limit (which must be
// positive). q.Agent is an agent ID and q.Client a principal; empty ones
// do not filter. Text without a word finds nothing.
func (db *DB) SearchMessages(ctx context.Context, q agent.SearchQuery) ([]agent.SearchHit, error) {
	match := ftsQuery(q.Text)
	if match == "" || q.Limit <= 0 {
		return nil, nil
	}
	// Behind every write queued before it, index what is not indexed yet,
	// so that the search sees every message committed before it.
	if err := db.inTx(ctx, indexAll); err != nil {
		return nil, fmt.Errorf("search messages: index the latest messages: %w", err)
	}
	query, args := searchSQL, []any{match}
	if q.Agent != "" {
		query += " AND c.agent_id = ?"
		args = append(args, q.Agent)
	}
	if q.Client != "" {
		query += " AND c.principal = ?"
		args = append(args, q.Client)
	}
	query += " ORDER BY messages_fts.docid DESC"
	rows, err := db.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	defer rows.Close()
	var (
		out  []agent.SearchHit
		seen = make(map[string]bool)
	)
	for len(out) < q.Limit && rows.Next() {
		var (
			h  agent.SearchHit
			at int64
		)
		if err := rows.Scan(&h.ConversationID, &h.Role, &at, &h.AgentID, &h.Principal, &h.Title, &h.Snippet); err != nil {
			return nil, fmt.Errorf("read search hit: %w", err)
		}
		if seen[h.ConversationID] {
			continue
		}
		seen[h.ConversationID] = true
		h.At = fromMillis(at)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return out, nil
}

// The full-text index is written by the writer in batches, apart from the
// turns' own transactions, so that appending a turn does not pay for an
// index segment of its own: indexEvery after a commit, at most indexBatch
// messages (by ID) a transaction, and before every search.
const (
	indexEvery = time.Second
	indexBatch = 4096
)

// backlogSQL reads the last message indexed and the last one stored.
const backlogSQL = `SELECT indexed_upto, (SELECT COALESCE(MAX(id), 0) FROM messages) FROM messages_fts_state`

// indexBacklog adds to the index the next batch of messages not in it yet
// (user and assistant ones; the others are only counted past), and says
// whether more are waiting.
func indexBacklog(ctx context.Context, tx *sql.Tx) (more bool, err error) {
	var upto, last int64
	if err := tx.QueryRowContext(ctx, backlogSQL).Scan(&upto, &last); err != nil {
		return false, fmt.Errorf("read what is indexed: %w", err)
	}
	if last <= upto {
		return false, nil
	}
	end := min(last, upto+indexBatch)
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (docid, content)
		SELECT id, content FROM messages WHERE id > ? AND id <= ? AND role IN ('user', 'assistant')`, upto, end); err != nil {
		return false, fmt.Errorf("index messages %d to %d: %w", upto+1, end, err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE messages_fts_state SET indexed_upto = ?", end); err != nil {
		return false, fmt.Errorf("record what is indexed: %w", err)
	}
	return end < last, nil
}

// indexAll indexes every message not in the index yet.
func indexAll(ctx context.Context, tx *sql.Tx) error {
	for {
		more, err := indexBacklog(ctx, tx)
		if err != nil || !more {
			return err
		}
	}
}

// indexSome runs one batch of indexBacklog in a transaction of its own,
// from the writer, and says whether more are waiting. A failure leaves
// the messages to the next batch (or the next search, which reports it).
func (db *DB) indexSome() (more bool) {
	// Most often there is nothing to add (the commits were reads' barriers
	// or wrote no message): a read says so without a transaction.
	var upto, last int64
	if err := db.writer.QueryRowContext(context.Background(), backlogSQL).Scan(&upto, &last); err != nil || last <= upto {
		return false
	}
	// A failed batch changes nothing (the position moves with its commit):
	// the next commit tries again, and a search indexes the backlog itself
	// and reports the error to the person searching.
	_ = db.runAlone(&writeJob{ctx: context.Background(), fn: func(ctx context.Context, tx *sql.Tx) error {
		var err error
		more, err = indexBacklog(ctx, tx)
		return err
	}})
	return more
}
