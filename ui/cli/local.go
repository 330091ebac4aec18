package cli

import (
	"context"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// Without a running Deskhand, commands change the core of this process;
// these give its features the shape of the control channel's client, so
// that a command has one path either way.

// localAgents is an agentEditor over the core's agents.
type localAgents struct{ *agent.Agents }

func (l localAgents) SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error) {
	return l.Save(ctx, a)
}

func (l localAgents) SetAgentEnabled(ctx context.Context, slug string, enabled bool) error {
	return l.SetEnabled(ctx, slug, enabled)
}

func (l localAgents) DeleteAgent(ctx context.Context, slug string) error { return l.Delete(ctx, slug) }

// localProviders is a providerKeeper over the core's providers.
type localProviders struct{ *agent.Providers }

func (l localProviders) SaveProvider(ctx context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error) {
	return l.Save(ctx, p, key)
}

func (l localProviders) DeleteProvider(ctx context.Context, name string) error {
	return l.Delete(ctx, name)
}

func (l localProviders) ProviderModels(ctx context.Context, name string) ([]string, error) {
	return l.Models(ctx, name)
}

// localToolServers is a toolServerKeeper over the core's tool servers.
type localToolServers struct{ s *agent.ToolServers }

func (l localToolServers) ToolServers(context.Context) ([]control.ToolServerInfo, error) {
	return control.ToolServerInfos(l.s.List(), l.s.Statuses()), nil
}

func (l localToolServers) AddToolServer(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error {
	return l.s.Add(ctx, s, sec)
}

func (l localToolServers) RemoveToolServer(ctx context.Context, name string) error {
	return l.s.Remove(ctx, name)
}

func (l localToolServers) CheckToolServer(ctx context.Context, name string) (agent.ToolServerCheck, error) {
	return l.s.Check(ctx, name)
}

func (l localToolServers) HeldToolServerTools(context.Context) ([]agent.HeldTool, error) {
	return l.s.Held(), nil
}

func (l localToolServers) AgentToolServers(_ context.Context, slug string) ([]agent.AgentToolServer, error) {
	return l.s.Attached(slug)
}

func (l localToolServers) AttachToolServer(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error) {
	return l.s.Attach(ctx, slug, req)
}

func (l localToolServers) DetachToolServer(ctx context.Context, slug, server string) error {
	return l.s.Detach(ctx, slug, server)
}

func (l localToolServers) RepinToolServerTool(ctx context.Context, slug, server, tool string) error {
	return l.s.Repin(ctx, slug, server, tool)
}
