package agent

import "context"

type clientModelKey struct{}

// WithClientModel records that the calling client lends its model for this
// call (it declared sampling). v is whatever the MCP surface uses to reach
// it; the BackendClient model (models/sampling) knows its type. The core
// only needs to know whether there is one.
func WithClientModel(ctx context.Context, v any) context.Context {
	return context.WithValue(ctx, clientModelKey{}, v)
}

// ClientModelFrom returns what WithClientModel recorded, or nil.
func ClientModelFrom(ctx context.Context) any {
	return ctx.Value(clientModelKey{})
}

// modelFor picks the model of a turn. An agent on the client's model runs
// there when the client lends it, else on its provider's model; with
// neither, the turn fails saying why.
func (c *Core) modelFor(ctx context.Context, agent Agent) (Model, error) {
	if agent.Backend == BackendClient {
		if m := c.models[BackendClient]; m != nil && ClientModelFrom(ctx) != nil {
			return m, nil
		}
		if agent.Model == "" {
			return nil, Userf(nil, "agent %q runs on the calling client's model, but this client does not lend it (it did not declare sampling) and the agent has no model of a provider to fall back on", agent.Slug)
		}
	}
	if agent.Model == "" {
		provider := agentProvider(agent)
		if p, ok := c.providers.Get(provider); ok && p.Kind == ProviderOllama {
			return nil, Userf(ErrNoModel, "agent %q has no model: pick one of provider %s's models in the agent's settings (or 'deskhand agent edit %s --model NAME'); with none installed, install one with 'ollama pull llama3.2'", agent.Slug, provider, agent.Slug)
		}
		return nil, Userf(ErrNoModel, "agent %q has no model: pick one of provider %s's models in the agent's settings (or 'deskhand agent edit %s --model NAME')", agent.Slug, provider, agent.Slug)
	}
	return c.providerModel(agentProvider(agent))
}
