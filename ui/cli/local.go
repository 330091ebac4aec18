package cli

import (
	"context"

	"github.com/deskhand/deskhand/server/agent"
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
