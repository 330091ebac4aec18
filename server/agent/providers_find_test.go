package agent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// serversAt answer "which models?" for the kinds and addresses they hold.
type serversAt map[string][]string // "kind base" → models

type answeringModel struct {
	*agenttest.Model
	models []string
	ok     bool
}

func (m answeringModel) ListModels(context.Context) ([]string, error) {
	if !m.ok {
		return nil, errors.New("404 page not found")
	}
	return m.models, nil
}

func (s serversAt) Connect(p agent.Provider, _ string) (agent.Model, error) {
	models, ok := s[string(p.Kind)+" "+p.BaseURL]
	return answeringModel{Model: &agenttest.Model{}, models: models, ok: ok}, nil
}

// TestFindAModelServer: an address is set up as the kind of server that
// answers there: Ollama moves the provider "ollama" (one Ollama, one
// address), an OpenAI-compatible server is added at /v1 or as typed,
// named after its port, and found again at the same address; nothing
// answering, or a bad address, changes nothing and says so.
func TestFindAModelServer(t *testing.T) {
	srv := serversAt{
		"ollama http://127.0.0.1:11439":              {"llama3.2:latest"},
		"openai-compatible http://127.0.0.1:1234/v1": {"qwen3-8b"},
		"openai-compatible http://192.168.1.5:8080":  {"gemma"},
	}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Connector: srv, Secrets: &agenttest.Secrets{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	for _, c := range []struct {
		address, name, kind, base string
		models                    []string
	}{
		{"127.0.0.1:11439", "ollama", "ollama", "http://127.0.0.1:11439", []string{"llama3.2:latest"}},
		{" http://127.0.0.1:1234/ ", "server-1234", "openai-compatible", "http://127.0.0.1:1234/v1", []string{"qwen3-8b"}},
		{"http://127.0.0.1:1234/v1", "server-1234", "openai-compatible", "http://127.0.0.1:1234/v1", []string{"qwen3-8b"}},
		{"http://192.168.1.5:8080", "server-8080", "openai-compatible", "http://192.168.1.5:8080", []string{"gemma"}},
	} {
		p, models, err := core.Providers().Find(t.Context(), c.address)
		if err != nil {
			t.Fatalf("Find(%q): %v", c.address, err)
		}
		if p.Name != c.name || string(p.Kind) != c.kind || p.BaseURL != c.base || !slices.Equal(models, c.models) {
			t.Errorf("Find(%q) = %s %s %s %v, want %s %s %s %v", c.address, p.Name, p.Kind, p.BaseURL, models, c.name, c.kind, c.base, c.models)
		}
		if saved, ok := core.Providers().Get(c.name); !ok || saved.BaseURL != c.base {
			t.Errorf("after Find(%q): provider %s saved %v at %q", c.address, c.name, ok, saved.BaseURL)
		}
	}
	before := core.Providers().List()
	for _, bad := range []string{"http://127.0.0.1:9", "", "http://"} {
		if _, _, err := core.Providers().Find(t.Context(), bad); err == nil || agent.UserMessage(err) == "" {
			t.Errorf("Find(%q) = %v, want a user error", bad, err)
		}
	}
	if after := core.Providers().List(); len(after) != len(before) {
		t.Errorf("a failed Find changed the providers: %d, then %d", len(before), len(after))
	}
}
