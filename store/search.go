package store

import (
	"context"
	"fmt"
	"strings"

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
	if err := db.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
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
