package toolservers

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// Host is what the servers' own requests reach in the core: their
// questions (elicitation) and, for servers allowed to, a model (sampling).
type Host interface {
	Elicit(ctx context.Context, server, message string, schema json.RawMessage) (map[string]any, bool, error)
	Sample(ctx context.Context, server, system string, msgs []agent.Message) (text, model string, err error)
}

// ForCore makes the Manager of the person's tool servers and the core's
// ToolServers port over it. The servers' questions and sampling requests
// go to the Host handed to hostReady once the core exists; before that
// they are declined. opts.Elicit and opts.Sample are set here.
func ForCore(opts Options) (m *Manager, port agent.ToolServerRunner, hostReady func(Host)) {
	host := &atomic.Pointer[Host]{}
	opts.Elicit = func(ctx context.Context, from Origin, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		decline := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
		h := host.Load()
		if h == nil || (req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm) {
			return decline, nil
		}
		schema, err := json.Marshal(req.Params.RequestedSchema)
		if err != nil {
			return decline, nil
		}
		content, ok, err := (*h).Elicit(ctx, from.Server, req.Params.Message, schema)
		if err != nil {
			return nil, err
		}
		if !ok {
			return decline, nil
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
	}
	opts.Sample = func(ctx context.Context, from Origin, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		h := host.Load()
		if h == nil {
			return nil, errors.New("Deskhand is starting")
		}
		msgs := make([]agent.Message, 0, len(req.CreateMessageParams.Messages))
		for _, m := range req.CreateMessageParams.Messages {
			text, ok := samplingText(m.Content)
			if !ok {
				return nil, errors.New("Deskhand answers sampling requests of text only")
			}
			msgs = append(msgs, agent.Message{Role: agent.Role(m.Role), Content: text})
		}
		text, model, err := (*h).Sample(ctx, from.Server, req.CreateMessageParams.SystemPrompt, msgs)
		if err != nil {
			return nil, errors.New(agent.UserMessage(err))
		}
		return &mcp.CreateMessageResult{Model: model, StopReason: "endTurn", SamplingMessage: mcp.SamplingMessage{
			Role: mcp.RoleAssistant, Content: mcp.NewTextContent(text)}}, nil
	}
	m = New(opts)
	return m, corePort{m}, func(h Host) { host.Store(&h) }
}

// samplingText is a sampling message's text content.
func samplingText(content any) (string, bool) {
	switch c := content.(type) {
	case mcp.TextContent:
		return c.Text, true
	case *mcp.TextContent:
		return c.Text, c != nil
	case map[string]any:
		text, ok := c["text"].(string)
		return text, ok && c["type"] == "text"
	}
	return "", false
}

// corePort is the core.s ToolServerRunner port over a Manager.
type corePort struct {
	m *Manager
}

var _ agent.ToolServerRunner = corePort{}

// Set implements agent.ToolServerRunner: each server with its secret values.
func (p corePort) Set(configs []agent.ToolServerConfig) error {
	out := make([]Config, 0, len(configs))
	for _, c := range configs {
		cfg := Config{
			Name: c.Name, Command: c.Command, Args: c.Args, Dir: c.Dir, URL: c.URL,
			AllowSampling: c.AllowSampling,
		}
		if len(c.Env)+len(c.SecretEnvValues) > 0 {
			cfg.Env = maps.Clone(c.Env)
			if cfg.Env == nil {
				cfg.Env = map[string]string{}
			}
			maps.Copy(cfg.Env, c.SecretEnvValues)
		}
		if len(c.Headers)+len(c.SecretHeaderValues) > 0 {
			cfg.Headers = maps.Clone(c.Headers)
			if cfg.Headers == nil {
				cfg.Headers = map[string]string{}
			}
			maps.Copy(cfg.Headers, c.SecretHeaderValues)
		}
		out = append(out, cfg)
	}
	return p.m.Set(out)
}

// Tools implements agent.ToolServerRunner.
func (p corePort) Tools(ctx context.Context, server string) ([]agent.ServerTool, error) {
	infos, err := p.m.Tools(ctx, server)
	if err != nil {
		return nil, err
	}
	out := make([]agent.ServerTool, 0, len(infos))
	for _, t := range infos {
		out = append(out, agent.ServerTool{
			Server: t.Server, Tool: t.Tool, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, ReadOnly: t.Annotations.ReadOnly(), Hash: t.Hash,
		})
	}
	return out, nil
}

// Call implements agent.ToolServerRunner.
func (p corePort) Call(ctx context.Context, server, tool string, args json.RawMessage) (agent.ToolServerResult, error) {
	res, err := p.m.Call(ctx, server, tool, args)
	if err != nil {
		return agent.ToolServerResult{}, err
	}
	return agent.ToolServerResult{Text: res.Text, IsError: res.IsError}, nil
}

// Reset implements agent.ToolServerRunner.
func (p corePort) Reset(server string) error { return p.m.Reset(server) }

// Status implements agent.ToolServerRunner.
func (p corePort) Status() []agent.ToolServerStatus {
	list := p.m.Status()
	out := make([]agent.ToolServerStatus, 0, len(list))
	for _, st := range list {
		out = append(out, agent.ToolServerStatus{
			Name: st.Name, State: string(st.State), Tools: st.Tools, LastError: st.LastError, LogFile: st.LogFile, PID: st.PID,
		})
	}
	return out
}

// Names implements agent.ToolServerRunner with NewNameTable.
func (p corePort) Names(refs []agent.ServerToolRef) (map[agent.ServerToolRef]string, error) {
	trefs := make([]ToolRef, 0, len(refs))
	for _, r := range refs {
		trefs = append(trefs, ToolRef{Server: r.Server, Tool: r.Tool})
	}
	table, err := NewNameTable(trefs)
	if err != nil {
		return nil, err
	}
	out := make(map[agent.ServerToolRef]string, len(refs))
	for _, r := range refs {
		out[r] = table.Name(ToolRef{Server: r.Server, Tool: r.Tool})
	}
	return out, nil
}
