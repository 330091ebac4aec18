package toolservers

import (
	"context"
	"encoding/json"

	"github.com/deskhand/deskhand/server/agent"
)

// Tool is one server tool as an agent's tool: the model sees it under
// its namespaced name, with the server's description and input schema,
// and a call goes through the Manager (which starts the server if need
// be).
type Tool struct {
	m    *Manager
	info ToolInfo
	name string
}

var (
	_ agent.Tool              = (*Tool)(nil)
	_ agent.ApprovalDefaulter = (*Tool)(nil)
)

// NewTool makes the agent.Tool for a tool the server listed. name is the
// model-facing name (from the agent's [NameTable]; "" means
// info.Name).
func NewTool(m *Manager, info ToolInfo, name string) *Tool {
	if name == "" {
		name = info.Name
	}
	return &Tool{m: m, info: info, name: name}
}

// Info is the definition the tool was made from (its Hash is the one the
// person approved, when the core pins it).
func (t *Tool) Info() ToolInfo { return t.info }

// Spec is what the model sees.
func (t *Tool) Spec() agent.ToolSpec {
	schema := t.info.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	desc := t.info.Description
	if desc == "" {
		desc = t.info.Title
	}
	return agent.ToolSpec{Name: t.name, Description: desc, Parameters: schema}
}

// NeedsApprovalByDefault: a tool server's tool may change anything,
// unless its server says it is read-only.
func (t *Tool) NeedsApprovalByDefault() bool { return !t.info.Annotations.ReadOnly() }

// ReadOnly reports whether the server says the tool changes nothing (a
// hint, for the catalog's annotations).
func (t *Tool) ReadOnly() bool { return t.info.Annotations.ReadOnly() }

// Call runs the tool on its server. A result the server marks isError
// comes back as a *agent.UserError with the server's text, so that the
// model reads it as a failed call.
func (t *Tool) Call(ctx context.Context, _ agent.Agent, args json.RawMessage) (string, error) {
	res, err := t.m.Call(ctx, t.info.Server, t.info.Tool, args)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", agent.Userf(nil, "%s", res.Text)
	}
	return res.Text, nil
}
