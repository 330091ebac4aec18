package store

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
)

// ApprovalRules returns every approval rule, oldest first.
func (db *DB) ApprovalRules(ctx context.Context) ([]agent.ApprovalRule, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, agent_id, tool, client_id, folder, host, created_at, created_by, review
		FROM approval_rules ORDER BY created_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list approval rules: %w", err)
	}
	defer rows.Close()
	var out []agent.ApprovalRule
	for rows.Next() {
		var (
			r       agent.ApprovalRule
			created int64
		)
		if err := rows.Scan(&r.ID, &r.Agent, &r.Tool, &r.Client, &r.Folder, &r.Host, &created, &r.CreatedBy, &r.Review); err != nil {
			return nil, fmt.Errorf("read approval rule: %w", err)
		}
		r.CreatedAt = fromMillis(created)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list approval rules: %w", err)
	}
	return out, nil
}

// PutApprovalRule inserts the rule; only its review changes once made. It
// returns an error wrapping agent.ErrNotFound when the agent does not exist.
func (db *DB) PutApprovalRule(ctx context.Context, r agent.ApprovalRule) error {
	_, err := db.exec(ctx, `INSERT INTO approval_rules (id, agent_id, tool, client_id, folder, host, created_at, created_by, review)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Agent, r.Tool, r.Client, r.Folder, r.Host, millis(r.CreatedAt), string(r.CreatedBy), r.Review)
	switch {
	case isConstraint(err, foreignKeyViolated):
		return fmt.Errorf("put approval rule %s: agent %s: %w", r.ID, r.Agent, agent.ErrNotFound)
	case isConstraint(err, checkViolated):
		return fmt.Errorf("put approval rule %s: created by %q, want client or desktop", r.ID, r.CreatedBy)
	case err != nil:
		return fmt.Errorf("put approval rule %s: %w", r.ID, busy(err))
	}
	return nil
}

// DeleteApprovalRule removes the rule; agent.ErrNotFound if there is none.
func (db *DB) DeleteApprovalRule(ctx context.Context, id string) error {
	res, err := db.exec(ctx, `DELETE FROM approval_rules WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete approval rule %s: %w", id, busy(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("delete approval rule %s: %w", id, agent.ErrNotFound)
	}
	return nil
}

// EnableApprovalRule clears the rule's review; agent.ErrNotFound if
// there is no such rule.
func (db *DB) EnableApprovalRule(ctx context.Context, id string) error {
	res, err := db.exec(ctx, `UPDATE approval_rules SET review = '' WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("enable approval rule %s: %w", id, busy(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("enable approval rule %s: %w", id, agent.ErrNotFound)
	}
	return nil
}

var _ agent.ApprovalRuleStore = (*DB)(nil)
