// Package providers makes the model of each provider kind: the adapter in
// models/ that speaks its server's API. It is the core's ModelConnector.
package providers

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/server/agent"
)

// Connector makes providers' models.
type Connector struct {
	// OllamaHost is the address of an Ollama provider that has none of
	// its own: the --ollama flag, OLLAMA_HOST or the Ollama setting; empty
	// means Ollama's default.
	OllamaHost string
	// LegacyOllamaKey is the API key kept for Ollama before providers,
	// used by the provider "ollama" while it has no key of its own.
	LegacyOllamaKey func() string
	// Reached is told each provider's server address, so that no agent's
	// network tool may reach it.
	Reached func(provider, baseURL string)
}

var _ agent.ModelConnector = (*Connector)(nil)

// Connect implements agent.ModelConnector. Every provider's address is
// passed to Reached first, even when no model can be made (a missing key).
func (c *Connector) Connect(p agent.Provider, secret string) (agent.Model, error) {
	c.reached(p.Name, c.Address(p))
	switch p.Kind {
	case agent.ProviderOllama:
		if secret == "" && p.Name == agent.OllamaProvider && c.LegacyOllamaKey != nil {
			secret = c.LegacyOllamaKey()
		}
		var opts []ollama.Option
		if secret != "" {
			opts = append(opts, ollama.WithAPIKey(secret))
		}
		return model(ollama.New(cmp.Or(p.BaseURL, c.OllamaHost), opts...))
	case agent.ProviderAnthropic:
		return model(anthropic.New(p.BaseURL, secret))
	case agent.ProviderOpenAI, agent.ProviderOpenAICompatible:
		opts := []openai.Option{openai.WithKind(openai.Kind(p.Kind))}
		if name := localName(p); name != "" {
			opts = append(opts, openai.WithName(name))
		}
		if secret != "" {
			opts = append(opts, openai.WithAPIKey(secret))
		}
		return model(openai.New(p.BaseURL, opts...))
	}
	return nil, fmt.Errorf("providers of kind %s are not supported by this build", p.Kind)
}

// model returns an adapter's constructor's result as the core's Model,
// with no typed nil in it.
func model[M agent.Model](m M, err error) (agent.Model, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Address is the server address the provider's model talks to: its own,
// or for Ollama without one, OllamaHost or Ollama's default.
func (c *Connector) Address(p agent.Provider) string {
	if p.Kind == agent.ProviderOllama {
		if m, err := ollama.New(cmp.Or(p.BaseURL, c.OllamaHost)); err == nil {
			return m.BaseURL()
		}
	}
	return p.BaseURL
}

func (c *Connector) reached(provider, baseURL string) {
	if c.Reached != nil {
		c.Reached(provider, baseURL)
	}
}

// LocalServers are the model servers people run on their own computer,
// at their usual loopback addresses, in the order a first start tries
// them: Ollama (at the Ollama setting's address), LM Studio, llama.cpp's
// server, vLLM.
func LocalServers() []agent.Provider {
	return []agent.Provider{
		{Name: agent.OllamaProvider, Kind: agent.ProviderOllama},
		{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:1234/v1"},
		{Name: "llamacpp", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8080/v1"},
		{Name: "vllm", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8000/v1"},
	}
}

// localName names the product at a provider's address when it is one
// a first start looks at ("LM Studio"), so that errors say which server
// to start; "" otherwise.
func localName(p agent.Provider) string {
	for _, local := range LocalServers() {
		if local.BaseURL != "" && local.BaseURL == p.BaseURL {
			return localNames[local.Name]
		}
	}
	return ""
}

var localNames = map[string]string{"lmstudio": "LM Studio", "llamacpp": "llama.cpp's server", "vllm": "vLLM"}

// Known are the providers the person set up, with the models each
// server offers.
type Known interface {
	List() []agent.ProviderStatus
	Models(ctx context.Context, name string) ([]string, error)
}

// Report logs, for each provider agents run on, whether its server
// answers and with how many models.
func (c *Connector) Report(ctx context.Context, known Known, log *slog.Logger) {
	for _, p := range known.List() {
		if len(p.UsedBy) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		models, err := known.Models(ctx, p.Name)
		cancel()
		if err != nil {
			log.Warn(agent.UserMessage(err), "provider", p.Name, "url", c.Address(p.Provider))
			continue
		}
		log.Info("model provider answers", "provider", p.Name, "kind", p.Kind, "url", c.Address(p.Provider), "models", len(models))
	}
}
