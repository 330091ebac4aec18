package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"path/filepath"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/toolservers"
)

// toolServerSet is the core's ToolServers port over a toolservers.Manager.
type toolServerSet struct {
	m *toolservers.Manager
}

var _ agent.ToolServers = toolServerSet{}

// newToolServers makes the Manager of the person's tool servers (logs
// under DATA/toolservers/) and the core's port over it; coreBuilt hands
// it the core once made, to which the servers' questions go, and their
// requests for a model (sampling, for servers allowed to).
func newToolServers(data string, log *slog.Logger, redact func(string) string) (m *toolservers.Manager, port agent.ToolServers, coreBuilt func(*agent.Core)) {
	core := &atomic.Pointer[agent.Core]{}
	m = toolservers.New(toolservers.Options{
		LogDir: filepath.Join(data, "toolservers"),
		Logger: log,
		Redact: redact,
		Elicit: func(ctx context.Context, from toolservers.Origin, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			decline := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
			c := core.Load()
			if c == nil || (req.Params.Mode != "" && req.Params.Mode != mcp.ElicitationModeForm) {
				return decline, nil
			}
			schema, err := json.Marshal(req.Params.RequestedSchema)
			if err != nil {
				return decline, nil
			}
			content, ok, err := c.ElicitForToolServer(ctx, from.Server, req.Params.Message, schema)
			if err != nil {
				return nil, err
			}
			if !ok {
				return decline, nil
			}
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
		},
		Sample: sample(core),
	})
	return m, toolServerSet{m}, core.Store
}

// sample answers a server's sampling/createMessage with the core (text
// messages only).
func sample(core *atomic.Pointer[agent.Core]) toolservers.SampleFunc {
	return func(ctx context.Context, from toolservers.Origin, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		c := core.Load()
		if c == nil {
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
		text, model, err := c.SampleForToolServer(ctx, from.Server, req.CreateMessageParams.SystemPrompt, msgs)
		if err != nil {
			return nil, errors.New(agent.UserMessage(err))
		}
		return &mcp.CreateMessageResult{Model: model, StopReason: "endTurn", SamplingMessage: mcp.SamplingMessage{
			Role: mcp.RoleAssistant, Content: mcp.NewTextContent(text)}}, nil
	}
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

// stopToolServers stops the person's MCP servers with their processes.
func (a *wiring) stopToolServers() {
	if err := a.toolServers.Close(); err != nil {
		a.log.Error("stop tool servers", "err", err)
	}
}

// Set implements agent.ToolServers.
func (s toolServerSet) Set(configs []agent.ToolServerConfig) error {
	out := make([]toolservers.Config, 0, len(configs))
	for _, c := range configs {
		cfg := toolservers.Config{
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
	return s.m.Set(out)
}

// Tools implements agent.ToolServers.
func (s toolServerSet) Tools(ctx context.Context, server string) ([]agent.ServerTool, error) {
	infos, err := s.m.Tools(ctx, server)
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

// Call implements agent.ToolServers.
func (s toolServerSet) Call(ctx context.Context, server, tool string, args json.RawMessage) (agent.ToolServerResult, error) {
	res, err := s.m.Call(ctx, server, tool, args)
	if err != nil {
		return agent.ToolServerResult{}, err
	}
	return agent.ToolServerResult{Text: res.Text, IsError: res.IsError}, nil
}

// Reset implements agent.ToolServers.
func (s toolServerSet) Reset(server string) error { return s.m.Reset(server) }

// Status implements agent.ToolServers.
func (s toolServerSet) Status() []agent.ToolServerStatus {
	list := s.m.Status()
	out := make([]agent.ToolServerStatus, 0, len(list))
	for _, st := range list {
		out = append(out, agent.ToolServerStatus{
			Name: st.Name, State: string(st.State), Tools: st.Tools, LastError: st.LastError, LogFile: st.LogFile, PID: st.PID,
		})
	}
	return out
}

// Names implements agent.ToolServers with toolservers.NewNameTable.
func (s toolServerSet) Names(refs []agent.ServerToolRef) (map[agent.ServerToolRef]string, error) {
	trefs := make([]toolservers.ToolRef, 0, len(refs))
	for _, r := range refs {
		trefs = append(trefs, toolservers.ToolRef{Server: r.Server, Tool: r.Tool})
	}
	table, err := toolservers.NewNameTable(trefs)
	if err != nil {
		return nil, err
	}
	out := make(map[agent.ServerToolRef]string, len(refs))
	for _, r := range refs {
		out[r] = table.Name(toolservers.ToolRef{Server: r.Server, Tool: r.Tool})
	}
	return out, nil
}
