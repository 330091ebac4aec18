package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
)

// putTeam replaces the agent's team with a.Team, in order. A member that
// does not exist is refused with agent.ErrNotFound.
func putTeam(ctx context.Context, tx *sql.Tx, a agent.Agent) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM agent_team WHERE agent_id = ?", a.ID); err != nil {
		return fmt.Errorf("clear the team of %s: %w", a.Slug, err)
	}
	for i, id := range a.Team {
		_, err := tx.ExecContext(ctx, "INSERT INTO agent_team (agent_id, member_id, position) VALUES (?, ?, ?)", a.ID, id, i)
		if isConstraint(err, foreignKeyViolated) {
			return fmt.Errorf("add agent %s to the team of %s: %w", id, a.Slug, agent.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("add agent %s to the team of %s: %w", id, a.Slug, err)
		}
	}
	return nil
}

// readTeams fills in each agent's team, in order.
func (db *DB) readTeams(ctx context.Context, agents []agent.Agent) error {
	at := make(map[string]int, len(agents))
	for i, a := range agents {
		at[a.ID] = i
	}
	rows, err := db.db.QueryContext(ctx, "SELECT agent_id, member_id FROM agent_team ORDER BY agent_id, position")
	if err != nil {
		return fmt.Errorf("list teams: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, member string
		if err := rows.Scan(&id, &member); err != nil {
			return fmt.Errorf("read a team member: %w", err)
		}
		if i, ok := at[id]; ok {
			agents[i].Team = append(agents[i].Team, member)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list teams: %w", err)
	}
	return nil
}

// SubConversations lists the conversations of the team members a turn
// called, in the order they started.
func (db *DB) SubConversations(ctx context.Context, parentTurnID string) ([]agent.Conversation, error) {
	if err := db.caughtUp(ctx); err != nil {
		return nil, fmt.Errorf("list sub-conversations: %w", err)
	}
	rows, err := db.db.QueryContext(ctx, `SELECT id, agent_id, principal, title, created_at, updated_at,
		COALESCE(parent_conversation_id, ''), COALESCE(parent_turn_id, '')
		FROM conversations WHERE parent_turn_id = ? ORDER BY created_at, rowid`, parentTurnID)
	if err != nil {
		return nil, fmt.Errorf("list sub-conversations of turn %s: %w", parentTurnID, err)
	}
	defer rows.Close()
	var out []agent.Conversation
	for rows.Next() {
		var (
			c                agent.Conversation
			created, updated int64
		)
		if err := rows.Scan(&c.ID, &c.AgentID, &c.Principal, &c.Title, &created, &updated, &c.ParentConversation, &c.ParentTurn); err != nil {
			return nil, fmt.Errorf("read a sub-conversation: %w", err)
		}
		c.CreatedAt, c.UpdatedAt = fromMillis(created), fromMillis(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sub-conversations of turn %s: %w", parentTurnID, err)
	}
	return out, nil
}

// nullText is NULL for "".
func nullText(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
