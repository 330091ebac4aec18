package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// storedAgentTool is one element of agents.tools, a JSON array.
type storedAgentTool struct {
	Name          string `json:"name"`
	NeedsApproval bool   `json:"needsApproval"`
}

// Agents returns every agent, in slug order.
func (db *DB) Agents(ctx context.Context) ([]agent.Agent, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, slug, name, description, prompt, backend, provider, model,
		response_schema, conversations, enabled, tools, folders, max_rounds, routing, question_timeout_ms,
		starter_prompts, client_may_approve, reachable_hosts, created_at, updated_at, icon, log_arguments
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
			tools, folders       string
			starters, reachable  string
			timeoutMS            int64
			created, updated     int64
			conversations, onOff int64
			clientMayApprove     int64
			logArguments         int64
		)
		if err := rows.Scan(&a.ID, &a.Slug, &a.Name, &a.Description, &a.Prompt, &a.Backend, &a.Provider, &a.Model,
			&schema, &conversations, &onOff, &tools, &folders, &a.MaxRounds, &a.Routing, &timeoutMS,
			&starters, &clientMayApprove, &reachable, &created, &updated, &a.Icon, &logArguments); err != nil {
			return nil, fmt.Errorf("read agent: %w", err)
		}
		if schema.Valid && schema.String != "null" { // null: saved through JSON without one
			a.ResponseSchema = json.RawMessage(schema.String)
		}
		if a.Tools, err = decodeAgentTools(tools); err != nil {
			return nil, fmt.Errorf("read agent %s tools: %w", a.Slug, err)
		}
		if a.Folders, err = decodeStrings(folders); err != nil {
			return nil, fmt.Errorf("read agent %s folders: %w", a.Slug, err)
		}
		if a.StarterPrompts, err = decodeStrings(starters); err != nil {
			return nil, fmt.Errorf("read agent %s starter prompts: %w", a.Slug, err)
		}
		if a.ReachableHosts, err = decodeStrings(reachable); err != nil {
			return nil, fmt.Errorf("read agent %s reachable hosts: %w", a.Slug, err)
		}
		a.QuestionTimeout = time.Duration(timeoutMS) * time.Millisecond
		a.Conversations, a.Enabled, a.ClientMayApprove = conversations != 0, onOff != 0, clientMayApprove != 0
		a.LogArguments = logArguments != 0
		a.CreatedAt, a.UpdatedAt = fromMillis(created), fromMillis(updated)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	if err := db.readTeams(ctx, out); err != nil { // teams.go
		return nil, err
	}
	return out, nil
}

// PutAgent inserts the agent or replaces every field of the one with its
// ID. It returns agent.ErrSlugTaken when another agent has the slug. The
// question timeout is kept in whole milliseconds.
func (db *DB) PutAgent(ctx context.Context, a agent.Agent) error {
	tools, err := encodeAgentTools(a.Tools)
	if err != nil {
		return fmt.Errorf("put agent %s: encode tools: %w", a.Slug, err)
	}
	folders, err := encodeStrings(a.Folders)
	if err != nil {
		return fmt.Errorf("put agent %s: encode folders: %w", a.Slug, err)
	}
	starters, err := encodeStrings(a.StarterPrompts)
	if err != nil {
		return fmt.Errorf("put agent %s: encode starter prompts: %w", a.Slug, err)
	}
	reachable, err := encodeStrings(a.ReachableHosts)
	if err != nil {
		return fmt.Errorf("put agent %s: encode reachable hosts: %w", a.Slug, err)
	}
	var schema sql.NullString
	if len(a.ResponseSchema) > 0 {
		schema = sql.NullString{String: string(a.ResponseSchema), Valid: true}
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO agents (id, slug, name, description, prompt, backend, provider, model,
			response_schema, conversations, enabled, tools, folders, max_rounds, routing, question_timeout_ms,
			starter_prompts, client_may_approve, reachable_hosts, created_at, updated_at, icon, log_arguments)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			slug = excluded.slug, name = excluded.name, description = excluded.description,
			prompt = excluded.prompt, backend = excluded.backend, provider = excluded.provider, model = excluded.model,
			response_schema = excluded.response_schema, conversations = excluded.conversations,
			enabled = excluded.enabled, tools = excluded.tools, folders = excluded.folders,
			max_rounds = excluded.max_rounds, routing = excluded.routing,
			question_timeout_ms = excluded.question_timeout_ms, starter_prompts = excluded.starter_prompts,
			client_may_approve = excluded.client_may_approve, reachable_hosts = excluded.reachable_hosts,
			created_at = excluded.created_at, updated_at = excluded.updated_at, icon = excluded.icon,
			log_arguments = excluded.log_arguments`,
			a.ID, a.Slug, a.Name, a.Description, a.Prompt, string(a.Backend), a.Provider, a.Model,
			schema, boolInt(a.Conversations), boolInt(a.Enabled), tools, folders, a.MaxRounds,
			string(a.Routing), a.QuestionTimeout.Milliseconds(),
			starters, boolInt(a.ClientMayApprove), reachable, millis(a.CreatedAt), millis(a.UpdatedAt), a.Icon, boolInt(a.LogArguments))
		if err != nil {
			return err
		}
		return putTeam(ctx, tx, a) // teams.go
	})
	err = busy(err)
	// agents.slug is the table's only UNIQUE constraint besides the key,
	// which the upsert handles.
	if isConstraint(err, uniqueViolated) {
		return fmt.Errorf("put agent %s: %w", a.Slug, agent.ErrSlugTaken)
	}
	// The other CHECKs are on columns written from booleans.
	if isConstraint(err, checkViolated) {
		return fmt.Errorf("put agent %s: routing %q is not one of client, desktop, decline or empty", a.Slug, a.Routing)
	}
	if err != nil {
		return fmt.Errorf("put agent %s: %w", a.Slug, err)
	}
	return nil
}

// encodeAgentTools writes agents.tools: [{"name": …, "needsApproval": …}, …].
func encodeAgentTools(tools []agent.AgentTool) (string, error) {
	stored := make([]storedAgentTool, len(tools))
	for i, t := range tools {
		stored[i] = storedAgentTool(t)
	}
	b, err := json.Marshal(stored)
	return string(b), err
}

// decodeAgentTools reads agents.tools; no tools is nil.
func decodeAgentTools(s string) ([]agent.AgentTool, error) {
	var stored []storedAgentTool
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		return nil, nil
	}
	tools := make([]agent.AgentTool, len(stored))
	for i, t := range stored {
		tools[i] = agent.AgentTool(t)
	}
	return tools, nil
}

// encodeStrings writes a JSON array of strings; nil is [].
func encodeStrings(ss []string) (string, error) {
	if ss == nil {
		ss = []string{}
	}
	b, err := json.Marshal(ss)
	return string(b), err
}

// decodeStrings reads a JSON array of strings; an empty one is nil.
func decodeStrings(s string) ([]string, error) {
	var ss []string
	if err := json.Unmarshal([]byte(s), &ss); err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, nil
	}
	return ss, nil
}

// DeleteAgent removes the agent with its conversations, their turns and
// messages; agent.ErrNotFound when there is no such agent.
func (db *DB) DeleteAgent(ctx context.Context, id string) error {
	res, err := db.exec(ctx, "DELETE FROM agents WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete agent %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("delete agent %s: %w", id, agent.ErrNotFound)
	}
	return nil
}
