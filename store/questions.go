package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// PutQuestion records a question the first time it is put, and afterwards
// updates its status and answer only: what was asked does not change.
//
// A question's answer is stored when, and only when, it is answered or
// declined (Answer.Declined is read back from the status): an answer
// without one of these statuses, or one of them without an answer, is
// refused rather than stored half. It returns an error wrapping
// agent.ErrNotFound when the turn does not exist in the question's
// conversation.
func (db *DB) PutQuestion(ctx context.Context, q agent.Question) error {
	if q.Status == "" {
		q.Status = agent.QuestionPending
	}
	answered := q.Status == agent.QuestionAnswered || q.Status == agent.QuestionDeclined
	switch {
	case answered && q.Answer == nil:
		return fmt.Errorf("put question %s: status %s without an answer", q.ID, q.Status)
	case !answered && q.Answer != nil:
		return fmt.Errorf("put question %s: an answer with status %s", q.ID, q.Status)
	case answered && q.Answer.Declined != (q.Status == agent.QuestionDeclined):
		return fmt.Errorf("put question %s: status %s with an answer that has Declined=%t", q.ID, q.Status, q.Answer.Declined)
	}
	choices, err := encodeStrings(q.Choices)
	if err != nil {
		return fmt.Errorf("put question %s: encode choices: %w", q.ID, err)
	}
	var args sql.NullString
	if len(q.Arguments) > 0 {
		args = sql.NullString{String: string(q.Arguments), Valid: true} // verbatim
	}
	var (
		a       agent.Answer
		approve sql.NullInt64
	)
	if q.Answer != nil {
		a = *q.Answer
		if q.Kind == agent.KindApproval && !a.Declined {
			approve = sql.NullInt64{Int64: boolInt(a.Approve), Valid: true}
		}
	}
	// An approval by a rule names the rule; answered_by is for people.
	answeredBy := string(a.By)
	switch {
	case a.By == agent.ByRule && a.Rule == "":
		return fmt.Errorf("put question %s: answered by a rule without the rule's ID", q.ID)
	case a.By == agent.ByRule:
		answeredBy = ""
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The turn must exist, in the conversation the question names.
		var turnConv string
		err := tx.QueryRowContext(ctx, "SELECT conversation_id FROM turns WHERE id = ?", q.TurnID).Scan(&turnConv)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && turnConv != q.ConversationID) {
			return fmt.Errorf("put question %s: conversation %s has no turn %s: %w", q.ID, q.ConversationID, q.TurnID, agent.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("put question %s: read turn %s: %w", q.ID, q.TurnID, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO questions (id, conversation_id, turn_id, agent, principal, seq,
				kind, text, choices, tool, arguments, asked_at, expires_at,
				status, answer_text, approve, comment, answered_by, answered_at, rule_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				status = excluded.status, answer_text = excluded.answer_text, approve = excluded.approve,
				comment = excluded.comment, answered_by = excluded.answered_by, answered_at = excluded.answered_at,
				rule_id = excluded.rule_id`,
			q.ID, q.ConversationID, q.TurnID, q.Agent, q.Principal, q.Seq,
			string(q.Kind), q.Text, choices, q.Tool, args, millis(q.AskedAt), millis(q.ExpiresAt),
			string(q.Status), a.Text, approve, a.Comment, answeredBy, nullMillis(a.At), a.Rule)
		if err != nil {
			return fmt.Errorf("put question %s: %w", q.ID, err)
		}
		return nil
	})
}

// Questions returns a conversation's questions in the order they were
// asked; agent.ErrNotFound if the conversation does not exist.
func (db *DB) Questions(ctx context.Context, conversationID string) ([]agent.Question, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, conversation_id, turn_id, agent, principal, seq,
			kind, text, choices, tool, arguments, asked_at, expires_at,
			status, answer_text, approve, comment, answered_by, answered_at, rule_id
		FROM questions WHERE conversation_id = ? ORDER BY asked_at, rowid`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("list questions of %s: %w", conversationID, err)
	}
	defer rows.Close()
	var out []agent.Question
	for rows.Next() {
		var (
			q                 agent.Question
			a                 agent.Answer
			choices           string
			args              sql.NullString
			asked, expires    int64
			approve, answered sql.NullInt64
		)
		if err := rows.Scan(&q.ID, &q.ConversationID, &q.TurnID, &q.Agent, &q.Principal, &q.Seq,
			&q.Kind, &q.Text, &choices, &q.Tool, &args, &asked, &expires,
			&q.Status, &a.Text, &approve, &a.Comment, &a.By, &answered, &a.Rule); err != nil {
			return nil, fmt.Errorf("read question: %w", err)
		}
		if q.Choices, err = decodeStrings(choices); err != nil {
			return nil, fmt.Errorf("read question %s choices: %w", q.ID, err)
		}
		if args.Valid {
			q.Arguments = []byte(args.String)
		}
		q.AskedAt, q.ExpiresAt = fromMillis(asked), fromMillis(expires)
		if q.Status == agent.QuestionAnswered || q.Status == agent.QuestionDeclined {
			a.Declined = q.Status == agent.QuestionDeclined
			a.Approve = approve.Valid && approve.Int64 != 0
			a.At = fromNullMillis(answered)
			if a.Rule != "" {
				a.By = agent.ByRule
			}
			q.Answer = &a
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list questions of %s: %w", conversationID, err)
	}
	if len(out) == 0 {
		return nil, db.checkConversation(ctx, conversationID)
	}
	return out, nil
}

// ExpirePendingQuestions marks every question still pending as expired
// and returns how many there were. Deskhand calls it once at start: a
// question still pending then lost its asker to a crash or kill, and
// nobody can answer it any more. Its ExpiresAt moves back to at if that
// is earlier (the wait ended then); it stays unanswered (no answer time).
func (db *DB) ExpirePendingQuestions(ctx context.Context, at time.Time) (int, error) {
	res, err := db.exec(ctx, `UPDATE questions SET status = ?, expires_at = MIN(expires_at, ?)
		WHERE status = ?`,
		string(agent.QuestionExpired), millis(at), string(agent.QuestionPending))
	if err != nil {
		return 0, fmt.Errorf("expire pending questions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("expire pending questions: %w", err)
	}
	return int(n), nil
}
