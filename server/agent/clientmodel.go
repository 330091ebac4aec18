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
// there when the client lends it, else on its Ollama model; with neither,
// the turn fails saying why.
func (c *Core) modelFor(ctx context.Context, agent Agent) (Model, error) {
	if agent.Backend == BackendClient {
		if m := c.models[BackendClient]; m != nil && ClientModelFrom(ctx) != nil {
			return m, nil
		}
		if m := c.models[BackendOllama]; m != nil && agent.Model != "" {
			return m, nil
		}
		return nil, Userf(nil, "agent %q runs on the calling client's model, but this client does not lend it (it did not declare sampling) and the agent has no Ollama model to fall back on", agent.Slug)
	}
	m := c.models[agent.Backend]
	if m == nil {
		return nil, Userf(nil, "agent %q runs on the %q model backend, which is not available here", agent.Slug, agent.Backend)
	}
	if agent.Backend == BackendOllama && agent.Model == "" {
		return nil, Userf(nil, "agent %q has no model: install one with 'ollama pull llama3.2', then set it in the agent's settings (or start Deskhand with --model)", agent.Slug)
	}
	return m, nil
}
