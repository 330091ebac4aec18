package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/mattn/go-sqlite3"
)

// Agents returns every agent, in slug order.
func (db *DB) Agents(ctx context.Context) ([]agent.Agent, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, slug, name, description, prompt, backend, model,
		response_schema, conversations, enabled, tools, max_rounds, created_at, updated_at
		FROM agents ORDER BY slug`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	var out []agent.Agent
	for rows.Next() {
		var (
			a                    agent.Agent
			schema               sql.NullString
			tools                string
			created, updated     int64
			conversations, onOff int64
		)
		if err := rows.Scan(&a.ID, &a.Slug, &a.Name, &a.Description, &a.Prompt, &a.Backend, &a.Model,
			&schema, &conversations, &onOff, &tools, &a.MaxRounds, &created, &updated); err != nil {
			return nil, fmt.Errorf("read agent: %w", err)
		}
		if schema.Valid {
			a.ResponseSchema = json.RawMessage(schema.String)
		}
		if err := json.Unmarshal([]byte(tools), &a.Tools); err != nil {
			return nil, fmt.Errorf("read agent %s tools: %w", a.Slug, err)
		}
		if len(a.Tools) == 0 {
			a.Tools = nil
		}
		a.Conversations, a.Enabled = conversations != 0, onOff != 0
		a.CreatedAt, a.UpdatedAt = fromMillis(created), fromMillis(updated)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// PutAgent inserts the agent or replaces every field of the one with its
// ID. It returns agent.ErrSlugTaken when another agent has the slug.
func (db *DB) PutAgent(ctx context.Context, a agent.Agent) error {
	tools, err := json.Marshal(a.Tools)
	if err != nil {
		return fmt.Errorf("put agent %s: encode tools: %w", a.Slug, err)
	}
	if a.Tools == nil {
		tools = []byte("[]")
	}
	var schema sql.NullString
	if len(a.ResponseSchema) > 0 {
		schema = sql.NullString{String: string(a.ResponseSchema), Valid: true}
	}
	_, err = db.db.ExecContext(ctx, `INSERT INTO agents (id, slug, name, description, prompt, backend, model,
			response_schema, conversations, enabled, tools, max_rounds, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			slug = excluded.slug, name = excluded.name, description = excluded.description,
			prompt = excluded.prompt, backend = excluded.backend, model = excluded.model,
			response_schema = excluded.response_schema, conversations = excluded.conversations,
			enabled = excluded.enabled, tools = excluded.tools, max_rounds = excluded.max_rounds,
			created_at = excluded.created_at, updated_at = excluded.updated_at`,
		a.ID, a.Slug, a.Name, a.Description, a.Prompt, string(a.Backend), a.Model,
		schema, boolInt(a.Conversations), boolInt(a.Enabled), string(tools), a.MaxRounds,
		millis(a.CreatedAt), millis(a.UpdatedAt))
	// agents.slug is the table's only UNIQUE constraint besides the key,
	// which the upsert handles.
	if isConstraint(err, sqlite3.ErrConstraintUnique) {
		return fmt.Errorf("put agent %s: %w", a.Slug, agent.ErrSlugTaken)
	}
	if err != nil {
		return fmt.Errorf("put agent %s: %w", a.Slug, err)
	}
	return nil
}
