package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// interruptedError is the reason given to turns that were running when the
// previous process stopped.
const interruptedError = "Deskhand stopped while this turn was running"

// insertConversation writes a new conversation; the error wraps
// agent.ErrNotFound when its agent does not exist.
func insertConversation(ctx context.Context, tx *sql.Tx, c agent.Conversation) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, agent_id, principal, title, created_at, updated_at,
			parent_conversation_id, parent_turn_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.AgentID, c.Principal, c.Title, millis(c.CreatedAt), millis(c.UpdatedAt),
		nullText(c.ParentConversation), nullText(c.ParentTurn))
	if isConstraint(err, foreignKeyViolated) {
		return fmt.Errorf("create conversation %s: agent %s: %w", c.ID, c.AgentID, agent.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("create conversation %s: %w", c.ID, busy(err))
	}
	return nil
}

// Conversation returns a conversation; agent.ErrNotFound if there is none
// with the ID.
func (db *DB) Conversation(ctx context.Context, id string) (agent.Conversation, error) {
	var (
		c                agent.Conversation
		created, updated int64
	)
	err := db.db.QueryRowContext(ctx, `SELECT id, agent_id, principal, title, created_at, updated_at,
		COALESCE(parent_conversation_id, ''), COALESCE(parent_turn_id, '')
		FROM conversations WHERE id = ?`, id).
		Scan(&c.ID, &c.AgentID, &c.Principal, &c.Title, &created, &updated, &c.ParentConversation, &c.ParentTurn)
	if errors.Is(err, sql.ErrNoRows) {
		return agent.Conversation{}, fmt.Errorf("conversation %s: %w", id, agent.ErrNotFound)
	}
	if err != nil {
		return agent.Conversation{}, fmt.Errorf("read conversation %s: %w", id, err)
	}
	c.CreatedAt, c.UpdatedAt = fromMillis(created), fromMillis(updated)
	return c, nil
}

// RecentConversations lists the conversations last active first, with
// the status of each one's latest turn (empty when it has none). Team
// members' conversations are not listed: SubConversations finds them
// from their parent turn.
func (db *DB) RecentConversations(ctx context.Context, limit int) ([]agent.ConversationSummary, error) {
	return db.summaries(ctx, "WHERE c.parent_turn_id IS NULL", nil, limit)
}

// ConversationsOf lists a principal's conversations, last active first,
// from after the conversation last listed (keyset paging on the index),
// without team members' conversations (as RecentConversations).
func (db *DB) ConversationsOf(ctx context.Context, principal string, after agent.PageMark, limit int) ([]agent.ConversationSummary, error) {
	where := "WHERE c.principal = ? AND c.parent_turn_id IS NULL"
	args := []any{principal}
	if after.ID != "" {
		ms := millis(after.UpdatedAt)
		where += " AND (c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))"
		args = append(args, ms, ms, after.ID)
	}
	return db.summaries(ctx, where, args, limit)
}

// summaryColumns are a page of conversations with each one's last turn's
// status, looked up for the page's rows only: the page's rows are chosen
// first, by their keys alone (summaryPage ends that query after its
// WHERE), so that a long history is neither copied whole into the sort
// nor read row by row for a status.
const summaryColumns = `SELECT c.id, c.agent_id, c.principal, c.title, c.created_at, c.updated_at,
		COALESCE((SELECT t.status FROM turns t WHERE t.conversation_id = c.id ORDER BY t.started_at DESC, t.rowid DESC LIMIT 1), '')
		FROM conversations c WHERE c.rowid IN (SELECT c.rowid FROM conversations c `

const summaryPage = ` ORDER BY c.updated_at DESC, c.id DESC LIMIT ?) ORDER BY c.updated_at DESC, c.id DESC`

func (db *DB) summaries(ctx context.Context, where string, args []any, limit int) ([]agent.ConversationSummary, error) {
	if err := db.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	rows, err := db.db.QueryContext(ctx, summaryColumns+where+summaryPage, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	defer rows.Close()
	var out []agent.ConversationSummary
	for rows.Next() {
		var (
			s                agent.ConversationSummary
			created, updated int64
			status           string
		)
		if err := rows.Scan(&s.ID, &s.AgentID, &s.Principal, &s.Title, &created, &updated, &status); err != nil {
			return nil, fmt.Errorf("read conversation: %w", err)
		}
		s.CreatedAt, s.UpdatedAt, s.LastStatus = fromMillis(created), fromMillis(updated), agent.TurnStatus(status)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return out, nil
}

// checkConversation returns an error wrapping agent.ErrNotFound when the
// conversation does not exist.
func (db *DB) checkConversation(ctx context.Context, id string) error {
	var one int
	err := db.db.QueryRowContext(ctx, "SELECT 1 FROM conversations WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("conversation %s: %w", id, agent.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read conversation %s: %w", id, err)
	}
	return nil
}

// Messages returns a conversation's transcript in the order the messages
// were recorded; agent.ErrNotFound if the conversation does not exist.
func (db *DB) Messages(ctx context.Context, conversationID string) ([]agent.Message, error) {
	return db.messages(ctx, conversationID, `SELECT role, content, tool_calls, tool_call_id, tool_name, turn_id, created_at
		FROM messages WHERE conversation_id = ? ORDER BY id`, conversationID)
}

// LastMessages returns the last n messages of a conversation, oldest
// first, through the (conversation_id, id) index; agent.ErrNotFound if the
// conversation does not exist.
func (db *DB) LastMessages(ctx context.Context, conversationID string, n int) ([]agent.Message, error) {
	return db.messages(ctx, conversationID, `SELECT role, content, tool_calls, tool_call_id, tool_name, turn_id, created_at FROM (
		SELECT id, role, content, tool_calls, tool_call_id, tool_name, turn_id, created_at
		FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id`, conversationID, n)
}

// CountMessages is how many messages the store holds.
func (db *DB) CountMessages(ctx context.Context) (int, error) {
	var n int
	if err := db.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages").Scan(&n); err != nil {
		return 0, fmt.Errorf("count messages: %w", err)
	}
	return n, nil
}

func (db *DB) messages(ctx context.Context, conversationID, query string, args ...any) ([]agent.Message, error) {
	if err := db.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", conversationID, err)
	}
	rows, err := db.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", conversationID, err)
	}
	defer rows.Close()
	var out []agent.Message
	for rows.Next() {
		var (
			m       agent.Message
			calls   sql.NullString
			created int64
		)
		if err := rows.Scan(&m.Role, &m.Content, &calls, &m.ToolCallID, &m.ToolName, &m.TurnID, &created); err != nil {
			return nil, fmt.Errorf("read message: %w", err)
		}
		if m.ToolCalls, err = decodeToolCalls(calls); err != nil {
			return nil, fmt.Errorf("read message of turn %s: %w", m.TurnID, err)
		}
		m.CreatedAt = fromMillis(created)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", conversationID, err)
	}
	if len(out) == 0 {
		return nil, db.checkConversation(ctx, conversationID)
	}
	return out, nil
}

// Turns returns a conversation's turns in the order they started;
// agent.ErrNotFound if the conversation does not exist.
func (db *DB) Turns(ctx context.Context, conversationID string) ([]agent.Turn, error) {
	if err := db.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("list turns of %s: %w", conversationID, err)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT id, conversation_id, agent_id, principal, status, model,
			started_at, ended_at, prompt_tokens, output_tokens, tool_calls, trimmed, error
		FROM turns WHERE conversation_id = ? ORDER BY started_at, rowid`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("list turns of %s: %w", conversationID, err)
	}
	defer rows.Close()
	var out []agent.Turn
	for rows.Next() {
		var (
			t       agent.Turn
			started int64
			ended   sql.NullInt64
		)
		if err := rows.Scan(&t.ID, &t.ConversationID, &t.AgentID, &t.Principal, &t.Status, &t.Model,
			&started, &ended, &t.PromptTokens, &t.OutputTokens, &t.ToolCalls, &t.Trimmed, &t.Error); err != nil {
			return nil, fmt.Errorf("read turn: %w", err)
		}
		t.StartedAt, t.EndedAt = fromMillis(started), fromNullMillis(ended)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns of %s: %w", conversationID, err)
	}
	if len(out) == 0 {
		return nil, db.checkConversation(ctx, conversationID)
	}
	return out, nil
}

// BeginTurn queues the record of a running turn and its user message, and
// of the conversation the turn starts, if any, written in one transaction
// that moves the conversation's UpdatedAt forward. committed waits for the
// commit; its error wraps agent.ErrNotFound when the conversation (or the
// new conversation's agent) does not exist.
func (db *DB) BeginTurn(ctx context.Context, start agent.TurnStart) (committed func() error) {
	if start.Turn.Status == "" {
		start.Turn.Status = agent.TurnRunning
	}
	if start.Turn.Status != agent.TurnRunning {
		err := fmt.Errorf("begin turn %s: status is %q, want %q", start.Turn.ID, start.Turn.Status, agent.TurnRunning)
		return func() error { return err }
	}
	// The write is queued, not awaited: it is committed with the next write
	// that is awaited (the turn's end, when the model answers at once) or
	// after a moment, so that a turn costs one commit, not two.
	j := &writeJob{ctx: context.WithoutCancel(ctx), behind: true, turnStart: &start, done: make(chan error, 1),
		fn: func(ctx context.Context, tx *sql.Tx) error { return writeTurn(ctx, tx, start, nil) }}
	return db.enqueue(j)
}

// turnEnd is what EndTurn writes: a turn as it ended and its messages.
type turnEnd struct {
	turn     agent.Turn
	produced []agent.Message
}

// writeTurn writes a turn's start: the conversation it starts, the turn
// and the user's message. With end, the turn is written as it ended, with
// the messages it produced, as EndTurn would after it (the writer does so
// when the two share a transaction: two statements fewer).
func writeTurn(ctx context.Context, tx *sql.Tx, start agent.TurnStart, end *turnEnd) error {
	t, user := start.Turn, start.User
	at := latest(t.StartedAt, user)
	var produced []agent.Message
	if end != nil {
		t, produced = end.turn, end.produced
		if l := latest(t.EndedAt, produced...); l.After(at) {
			at = l
		}
	}
	if c := start.NewConversation; c != nil {
		conv := *c
		if at.After(conv.UpdatedAt) {
			conv.UpdatedAt = at
		}
		if err := insertConversation(ctx, tx, conv); err != nil {
			return err
		}
	}
	// duration_ms as EndTurn's UPDATE computes it, from the stored times.
	var duration int64
	if !t.EndedAt.IsZero() {
		duration = millis(t.EndedAt) - millis(t.StartedAt)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO turns (id, conversation_id, agent_id, principal, status, model,
			started_at, ended_at, duration_ms, prompt_tokens, output_tokens, tool_calls, trimmed, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ConversationID, t.AgentID, t.Principal, string(t.Status), t.Model,
		millis(t.StartedAt), nullMillis(t.EndedAt), duration,
		t.PromptTokens, t.OutputTokens, t.ToolCalls, t.Trimmed, t.Error)
	if isConstraint(err, foreignKeyViolated) {
		return fmt.Errorf("insert turn %s: conversation %s: %w", t.ID, t.ConversationID, agent.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("insert turn %s: %w", t.ID, busy(err))
	}
	if err := insertMessage(ctx, tx, t.ConversationID, t.ID, user); err != nil {
		return fmt.Errorf("insert user message: %w", err)
	}
	for i, m := range produced {
		if err := insertMessage(ctx, tx, t.ConversationID, t.ID, m); err != nil {
			return fmt.Errorf("insert message %d of turn %s: %w", i+1, t.ID, err)
		}
	}
	if start.NewConversation != nil {
		return nil // written above with its time
	}
	return touchConversation(ctx, tx, t.ConversationID, at)
}

// EndTurn records how a turn ended (status, end, model, token and tool call
// counts, error) and the messages it produced, in one transaction, and
// moves the conversation's UpdatedAt forward. It returns an error wrapping
// agent.ErrNotFound when the turn does not exist in t.ConversationID.
func (db *DB) EndTurn(ctx context.Context, t agent.Turn, produced []agent.Message) error {
	if t.Status == agent.TurnRunning {
		return fmt.Errorf("end turn %s: status is still %q", t.ID, t.Status)
	}
	ended := nullMillis(t.EndedAt)
	j := &writeJob{ctx: ctx, turnEnd: &turnEnd{turn: t, produced: produced}, done: make(chan error, 1),
		fn: func(ctx context.Context, tx *sql.Tx) error {
			// The turn must be the conversation's, whose messages these are.
			res, err := tx.ExecContext(ctx, `UPDATE turns SET status = ?, model = ?, ended_at = ?,
				duration_ms = COALESCE(? - started_at, 0),
				prompt_tokens = ?, output_tokens = ?, tool_calls = ?, trimmed = ?, error = ?
			WHERE id = ? AND conversation_id = ?`,
				string(t.Status), t.Model, ended, ended,
				t.PromptTokens, t.OutputTokens, t.ToolCalls, t.Trimmed, t.Error, t.ID, t.ConversationID)
			if err != nil {
				return fmt.Errorf("update turn %s: %w", t.ID, busy(err))
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return fmt.Errorf("update turn %s of conversation %s: %w", t.ID, t.ConversationID, cmp.Or(err, agent.ErrNotFound))
			}
			for i, m := range produced {
				if err := insertMessage(ctx, tx, t.ConversationID, t.ID, m); err != nil {
					return fmt.Errorf("insert message %d of turn %s: %w", i+1, t.ID, err)
				}
			}
			return touchConversation(ctx, tx, t.ConversationID, latest(t.EndedAt, produced...))
		}}
	return db.enqueue(j)()
}

// InterruptRunningTurns marks every turn still running as interrupted,
// ended at at, and returns how many there were. Deskhand calls it once at
// start: a turn still running then was cut short by a crash or kill.
func (db *DB) InterruptRunningTurns(ctx context.Context, at time.Time) (int, error) {
	ms := millis(at)
	res, err := db.exec(ctx, `UPDATE turns SET status = ?, ended_at = ?, duration_ms = ? - started_at, error = ?
		WHERE status = ?`,
		string(agent.TurnInterrupted), ms, ms, interruptedError, string(agent.TurnRunning))
	if err != nil {
		return 0, fmt.Errorf("interrupt running turns: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("interrupt running turns: %w", err)
	}
	return int(n), nil
}

// insertMessage appends m to the conversation's transcript as a message of
// the turn. A message that names another turn is refused.
func insertMessage(ctx context.Context, tx *sql.Tx, conversationID, turnID string, m agent.Message) error {
	if m.TurnID != "" && m.TurnID != turnID {
		return fmt.Errorf("message belongs to turn %s, not %s", m.TurnID, turnID)
	}
	calls, err := encodeToolCalls(m.ToolCalls)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO messages (conversation_id, turn_id, role, content, tool_calls,
			tool_call_id, tool_name, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		conversationID, turnID, string(m.Role), m.Content, calls, m.ToolCallID, m.ToolName, millis(m.CreatedAt))
	return err
}

// touchConversation moves the conversation's UpdatedAt forward to at
// (never back; a zero at changes nothing).
func touchConversation(ctx context.Context, tx *sql.Tx, id string, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	_, err := tx.ExecContext(ctx, "UPDATE conversations SET updated_at = MAX(updated_at, ?) WHERE id = ?", millis(at), id)
	if err != nil {
		return fmt.Errorf("update conversation %s: %w", id, err)
	}
	return nil
}

// latest is the latest of t and the messages' times.
func latest(t time.Time, msgs ...agent.Message) time.Time {
	for _, m := range msgs {
		if m.CreatedAt.After(t) {
			t = m.CreatedAt
		}
	}
	return t
}

// storedToolCall is one element of messages.tool_calls, a JSON array.
// Arguments that are a JSON value without surrounding space are embedded
// as they are (encoding/json would re-encode a json.RawMessage: compact it
// and escape <, >, &), so they read back byte for byte. Anything else is
// kept verbatim as a string in arguments_text, so that a model's malformed
// call cannot cost a turn its record.
type storedToolCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ArgumentsText *string         `json:"arguments_text,omitempty"`
}

func encodeToolCalls(calls []agent.ToolCall) (sql.NullString, error) {
	if len(calls) == 0 {
		return sql.NullString{}, nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, c := range calls {
		if i > 0 {
			b.WriteByte(',')
		}
		id, err := json.Marshal(c.ID)
		if err != nil {
			return sql.NullString{}, fmt.Errorf("encode tool call: %w", err)
		}
		name, err := json.Marshal(c.Name)
		if err != nil {
			return sql.NullString{}, fmt.Errorf("encode tool call: %w", err)
		}
		b.WriteString(`{"id":`)
		b.Write(id)
		b.WriteString(`,"name":`)
		b.Write(name)
		switch args := c.Arguments; {
		case len(args) == 0:
		case json.Valid(args) && len(bytes.TrimSpace(args)) == len(args):
			b.WriteString(`,"arguments":`)
			b.Write(args)
		default:
			text, err := json.Marshal(string(args))
			if err != nil {
				return sql.NullString{}, fmt.Errorf("encode tool call: %w", err)
			}
			b.WriteString(`,"arguments_text":`)
			b.Write(text)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return sql.NullString{String: b.String(), Valid: true}, nil
}

func decodeToolCalls(s sql.NullString) ([]agent.ToolCall, error) {
	if !s.Valid {
		return nil, nil
	}
	var stored []storedToolCall
	if err := json.Unmarshal([]byte(s.String), &stored); err != nil {
		return nil, fmt.Errorf("decode tool calls: %w", err)
	}
	if len(stored) == 0 {
		return nil, nil
	}
	calls := make([]agent.ToolCall, len(stored))
	for i, c := range stored {
		calls[i] = agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if c.ArgumentsText != nil {
			calls[i].Arguments = json.RawMessage(*c.ArgumentsText)
		}
	}
	return calls, nil
}
