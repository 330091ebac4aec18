package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
)

var _ agent.ToolServerStore = (*DB)(nil)

// ToolServers returns every tool server, by name. Secret values are not
// here: only their names.
func (db *DB) ToolServers(ctx context.Context) ([]agent.ToolServer, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT name, command, args, env, dir, url, headers, secret_env, secret_headers,
		allow_sampling, created_at, updated_at FROM tool_servers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tool servers: %w", err)
	}
	defer rows.Close()
	var out []agent.ToolServer
	for rows.Next() {
		var (
			s                                  agent.ToolServer
			args, env, headers, sEnv, sHeaders string
			sampling, created, updated         int64
		)
		if err := rows.Scan(&s.Name, &s.Command, &args, &env, &s.Dir, &s.URL, &headers, &sEnv, &sHeaders,
			&sampling, &created, &updated); err != nil {
			return nil, fmt.Errorf("read tool server: %w", err)
		}
		for _, f := range []struct {
			text string
			into any
		}{{args, &s.Args}, {env, &s.Env}, {headers, &s.Headers}, {sEnv, &s.SecretEnv}, {sHeaders, &s.SecretHeaders}} {
			if err := json.Unmarshal([]byte(f.text), f.into); err != nil {
				return nil, fmt.Errorf("read tool server %s: %w", s.Name, err)
			}
		}
		s.AllowSampling = sampling == 1
		s.CreatedAt, s.UpdatedAt = fromMillis(created), fromMillis(updated)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tool servers: %w", err)
	}
	return out, nil
}

// jsonText is v as JSON text; nil slices and maps become [] and {}.
func jsonText[T any](v T, empty string) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return empty
	}
	return string(b)
}

// PutToolServer inserts the server or replaces the one of that name; its
// creation time stays.
func (db *DB) PutToolServer(ctx context.Context, s agent.ToolServer) error {
	_, err := db.exec(ctx, `INSERT INTO tool_servers (name, command, args, env, dir, url, headers, secret_env, secret_headers,
			allow_sampling, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET command = excluded.command, args = excluded.args, env = excluded.env,
			dir = excluded.dir, url = excluded.url, headers = excluded.headers, secret_env = excluded.secret_env,
			secret_headers = excluded.secret_headers, allow_sampling = excluded.allow_sampling, updated_at = excluded.updated_at`,
		s.Name, s.Command, jsonText(s.Args, "[]"), jsonText(s.Env, "{}"), s.Dir, s.URL, jsonText(s.Headers, "{}"),
		jsonText(s.SecretEnv, "[]"), jsonText(s.SecretHeaders, "[]"), boolInt(s.AllowSampling),
		millis(s.CreatedAt), millis(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put tool server %s: %w", s.Name, busy(err))
	}
	return nil
}

// DeleteToolServer removes the server and detaches it from every agent;
// agent.ErrNotFound if there is none.
func (db *DB) DeleteToolServer(ctx context.Context, name string) error {
	res, err := db.exec(ctx, `DELETE FROM tool_servers WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete tool server %s: %w", name, busy(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("delete tool server %s: %w", name, agent.ErrNotFound)
	}
	return nil
}

// AgentToolServers returns every attachment, by agent then server, each
// with its tools by name.
func (db *DB) AgentToolServers(ctx context.Context) ([]agent.AgentToolServer, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT a.agent_id, a.server, a.all_tools, t.tool, t.ask_first, t.pinned_hash, t.pinned_definition
		FROM agent_tool_servers a LEFT JOIN agent_tool_server_tools t ON t.agent_id = a.agent_id AND t.server = a.server
		ORDER BY a.agent_id, a.server, t.tool`)
	if err != nil {
		return nil, fmt.Errorf("list agents' tool servers: %w", err)
	}
	defer rows.Close()
	var out []agent.AgentToolServer
	for rows.Next() {
		var (
			agentID, server string
			all             int64
			tool, hash, def sql.NullString
			ask             sql.NullInt64
		)
		if err := rows.Scan(&agentID, &server, &all, &tool, &ask, &hash, &def); err != nil {
			return nil, fmt.Errorf("read agent's tool server: %w", err)
		}
		if n := len(out); n == 0 || out[n-1].AgentID != agentID || out[n-1].Server != server {
			out = append(out, agent.AgentToolServer{AgentID: agentID, Server: server, AllTools: all == 1})
		}
		if tool.Valid {
			last := &out[len(out)-1]
			last.Tools = append(last.Tools, agent.AttachedTool{Tool: tool.String, AskFirst: ask.Int64 == 1, Hash: hash.String, Definition: def.String})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list agents' tool servers: %w", err)
	}
	return out, nil
}

// PutAgentToolServer replaces the attachment and its tools in one
// transaction; an error wrapping agent.ErrNotFound when the agent or the
// server does not exist.
func (db *DB) PutAgentToolServer(ctx context.Context, a agent.AgentToolServer) error {
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM agent_tool_servers WHERE agent_id = ? AND server = ?`, a.AgentID, a.Server); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_tool_servers (agent_id, server, all_tools) VALUES (?, ?, ?)`,
			a.AgentID, a.Server, boolInt(a.AllTools)); err != nil {
			return err
		}
		for _, t := range a.Tools {
			if _, err := tx.ExecContext(ctx, `INSERT INTO agent_tool_server_tools (agent_id, server, tool, ask_first, pinned_hash, pinned_definition)
				VALUES (?, ?, ?, ?, ?, ?)`, a.AgentID, a.Server, t.Tool, boolInt(t.AskFirst), t.Hash, t.Definition); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case isConstraint(err, foreignKeyViolated):
		return fmt.Errorf("attach tool server %s to agent %s: %w", a.Server, a.AgentID, agent.ErrNotFound)
	case err != nil:
		return fmt.Errorf("attach tool server %s to agent %s: %w", a.Server, a.AgentID, busy(err))
	}
	return nil
}

// DeleteAgentToolServer detaches the server from the agent;
// agent.ErrNotFound if it was not attached.
func (db *DB) DeleteAgentToolServer(ctx context.Context, agentID, server string) error {
	res, err := db.exec(ctx, `DELETE FROM agent_tool_servers WHERE agent_id = ? AND server = ?`, agentID, server)
	if err != nil {
		return fmt.Errorf("detach tool server %s from agent %s: %w", server, agentID, busy(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("detach tool server %s from agent %s: %w", server, agentID, agent.ErrNotFound)
	}
	return nil
}
