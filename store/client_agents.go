package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
)

// putClientAgents replaces the client's list of visible agents. An agent
// deleted meanwhile is left out (the list keeps existing agents only).
func putClientAgents(ctx context.Context, tx *sql.Tx, c agent.Client) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM client_agents WHERE client_id = ?", c.ID); err != nil {
		return fmt.Errorf("clear the agents of client %s: %w", c.Name, err)
	}
	if !c.Agents.Only {
		return nil
	}
	for _, id := range c.Agents.AgentIDs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO client_agents (client_id, agent_id)
			SELECT ?, id FROM agents WHERE id = ?`, c.ID, id); err != nil {
			return fmt.Errorf("add agent %s to client %s: %w", id, c.Name, err)
		}
	}
	return nil
}

// readClientAgents fills in the visible agents of the limited clients.
func (db *DB) readClientAgents(ctx context.Context, clients []agent.Client) error {
	at := map[string]int{}
	for i, c := range clients {
		if c.Agents.Only {
			at[c.ID] = i
			clients[i].Agents.AgentIDs = []string{}
		}
	}
	if len(at) == 0 {
		return nil
	}
	rows, err := db.db.QueryContext(ctx, "SELECT client_id, agent_id FROM client_agents ORDER BY client_id, agent_id")
	if err != nil {
		return fmt.Errorf("list the agents of clients: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var client, agentID string
		if err := rows.Scan(&client, &agentID); err != nil {
			return fmt.Errorf("read an agent of a client: %w", err)
		}
		if i, ok := at[client]; ok {
			clients[i].Agents.AgentIDs = append(clients[i].Agents.AgentIDs, agentID)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list the agents of clients: %w", err)
	}
	return nil
}
