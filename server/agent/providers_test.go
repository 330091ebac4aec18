package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// connector records what it connected and hands out one model per call.
type connector struct {
	mu    sync.Mutex
	calls []string // provider name and the secret it got
	info  agent.ModelInfo
}

type describedModel struct {
	*agenttest.Model
	info agent.ModelInfo
}

func (m describedModel) DescribeModel(context.Context, string) (agent.ModelInfo, error) {
	return m.info, nil
}

func (m describedModel) ListModels(context.Context) ([]string, error) {
	return []string{"m1", "m2"}, nil
}

func (c *connector) Connect(p agent.Provider, secret string) (agent.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, p.Name+" "+p.BaseURL+" key="+secret)
	return describedModel{Model: &agenttest.Model{}, info: c.info}, nil
}

func (c *connector) connects() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func TestProviders(t *testing.T) {
	ctx := t.Context()
	db := storetest.Open(t)
	secrets := &agenttest.Secrets{}
	conn := &connector{info: agent.ModelInfo{StructuredOutput: agent.CapabilityNo}}
	core, err := agent.New(ctx, agent.Config{History: db, Connector: conn, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)

	for _, bad := range []agent.Provider{
		{Name: "Bad Name", Kind: agent.ProviderOpenAI},
		{Name: "client", Kind: agent.ProviderOpenAI},
		{Name: "x", Kind: "gopher"},
		{Name: "x", Kind: agent.ProviderOpenAICompatible}, // no address
		{Name: "x", Kind: agent.ProviderOpenAICompatible, BaseURL: "ftp://host"},
		{Name: "x", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://user:pw@host"},
	} {
		if _, err := core.Providers().Save(ctx, bad, agent.KeyChange{}); err == nil || agent.UserMessage(err) == "" {
			t.Errorf("SaveProvider(%+v) = %v, want a user error", bad, err)
		}
	}
	const key = "sk-ant-secret-1234"
	events := core.Events().Subscribe(ctx)
	p, err := core.Providers().Save(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic}, agent.KeyChange{Set: true, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		if e.Kind != agent.EventProvidersChanged || e.Text != "claude" {
			t.Errorf("after a save the core said %+v, want providers_changed claude", e)
		}
	case <-time.After(10 * time.Second): // a guard, not a synchronisation
		t.Error("the core said nothing after a provider was saved")
	}
	if p.BaseURL != "https://api.anthropic.com" {
		t.Errorf("default address %q", p.BaseURL)
	}
	if got, _ := secrets.Get(agent.ProviderSecretKey("claude")); got != key {
		t.Errorf("keychain holds %q, want the key", got)
	}
	if _, err := core.Providers().Save(ctx, agent.Provider{Name: "x", Kind: agent.ProviderOpenAI}, agent.KeyChange{Set: true, Key: key + "\n"}); err == nil {
		t.Error("a key with a line break was taken")
	}

	// An agent on an unknown provider, or with a schema its model cannot
	// answer in, is refused at save time.
	if _, err := core.Agents().Save(ctx, agent.Agent{Slug: "a", Provider: "nope", Model: "m1"}); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("agent on a missing provider: %v", err)
	}
	_, err = core.Agents().Save(ctx, agent.Agent{Slug: "a", Provider: "claude", Model: "m1", ResponseSchema: []byte(`{"type":"object"}`)})
	if err == nil || !strings.Contains(agent.UserMessage(err), "cannot answer in the shape") {
		t.Errorf("schema on a model without structured output: %v", err)
	}
	a, err := core.Agents().Save(ctx, agent.Agent{Slug: "a", Provider: "claude", Model: "m1", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Conversations().Run(ctx, agent.RunRequest{Agent: a.Slug, Principal: "p", Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Conversations().Run(ctx, agent.RunRequest{Agent: a.Slug, Principal: "p", Message: "again"}); err != nil {
		t.Fatal(err)
	}
	// One connection per version of the provider, with its key.
	want := "claude https://api.anthropic.com key=" + key
	if got := conn.connects(); len(got) != 1 || got[0] != want {
		t.Errorf("connects = %q, want one: %q", got, want)
	}
	if models, err := core.Providers().Models(ctx, "claude"); err != nil || len(models) != 2 {
		t.Errorf("ProviderModels = %v, %v", models, err)
	}

	st := core.Providers().List()
	if len(st) != 2 || st[0].Name != "claude" || !st[0].HasKey || len(st[0].UsedBy) != 1 || st[1].Name != agent.OllamaProvider || st[1].HasKey {
		t.Errorf("Providers() = %+v", st)
	}
	if err := core.Providers().Delete(ctx, "claude"); err == nil || !strings.Contains(agent.UserMessage(err), "used by a") {
		t.Errorf("deleting a provider in use: %v", err)
	}

	// A change of the provider connects anew; removing the key removes it.
	if _, err := core.Providers().Save(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic, BaseURL: "https://proxy.example/anthropic"}, agent.KeyChange{Set: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Get(agent.ProviderSecretKey("claude")); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("the removed key is still there: %v", err)
	}
	// Removing a key that is not there is no error (the keychain says
	// "not found").
	if _, err := core.Providers().Save(ctx, agent.Provider{Name: agent.OllamaProvider, Kind: agent.ProviderOllama}, agent.KeyChange{Set: true}); err != nil {
		t.Errorf("removing a missing key: %v", err)
	}
	if _, err := core.Conversations().Run(ctx, agent.RunRequest{Agent: a.Slug, Principal: "p", Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if got := conn.connects(); len(got) != 2 || got[1] != "claude https://proxy.example/anthropic key=" {
		t.Errorf("connects after the change = %q", got)
	}

	if err := core.Agents().Delete(ctx, a.Slug); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Providers().Save(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic}, agent.KeyChange{Set: true, Key: key}); err != nil {
		t.Fatal(err)
	}
	if err := core.Providers().Delete(ctx, "claude"); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Get(agent.ProviderSecretKey("claude")); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("a deleted provider's key stayed in the keychain: %v", err)
	}
	// A restart reads what was saved.
	core.Close()
	again, err := agent.New(ctx, agent.Config{History: db, Connector: conn, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if st := again.Providers().List(); len(st) != 1 || st[0].Name != agent.OllamaProvider {
		t.Errorf("providers after a restart: %+v", st)
	}
}

// TestTrimmedTurnIsRecorded: a reply sent without the oldest messages
// marks the turn, so that the transcript can say so.
func TestTrimmedTurnIsRecorded(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	f.model.Reply = func(_ context.Context, n int, _ agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
		r := agenttest.Text("ok")
		r.Trimmed = 3
		return r, nil
	}
	res, err := f.run(t, "p", "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	turns, err := f.db.Turns(t.Context(), res.Conversation.ID)
	if err != nil || len(turns) != 1 || turns[0].Trimmed != 3 {
		t.Errorf("turns = %+v, %v; want one trimmed by 3", turns, err)
	}
}

// localModels is a server's model list with what each says it can do.
type localModels struct {
	agenttest.Model
	models map[string]agent.Capability // model → calls tools
	order  []string
	down   bool
}

func (m *localModels) ListModels(context.Context) ([]string, error) {
	if m.down {
		return nil, errors.New("connection refused")
	}
	return m.order, nil
}

func (m *localModels) DescribeModel(_ context.Context, name string) (agent.ModelInfo, error) {
	return agent.ModelInfo{Name: name, Tools: m.models[name]}, nil
}

// serversConnector hands out each local server's models by address.
type serversConnector map[string]*localModels

func (c serversConnector) Connect(p agent.Provider, _ string) (agent.Model, error) {
	if m, ok := c[p.BaseURL]; ok {
		return m, nil
	}
	return nil, errors.New("no such server")
}

// TestFirstStartPicksALocalModel: the first server, in order, that
// answers with a model that calls tools (or does not say it cannot)
// carries the assistant, on the model that says it can if there is one.
func TestFirstStartPicksALocalModel(t *testing.T) {
	for _, tc := range []struct {
		name               string
		servers            serversConnector
		provider, model    string
		providerSavedAfter bool
	}{
		{
			name: "the first server is down, the second has a tool model",
			servers: serversConnector{
				"http://a/v1": {down: true},
				"http://b/v1": {order: []string{"chat-only", "tooly"}, models: map[string]agent.Capability{"chat-only": agent.CapabilityNo, "tooly": agent.CapabilityYes}},
			},
			provider: "b", model: "tooly", providerSavedAfter: true,
		},
		{
			name: "a server whose models cannot call tools is passed over",
			servers: serversConnector{
				"http://a/v1": {order: []string{"embed"}, models: map[string]agent.Capability{"embed": agent.CapabilityNo}},
				"http://b/v1": {order: []string{"unknown"}},
			},
			provider: "b", model: "unknown", providerSavedAfter: true,
		},
		{
			name: "a model that says it calls tools wins over one that does not say",
			servers: serversConnector{
				"http://a/v1": {order: []string{"quiet", "says-yes"}, models: map[string]agent.Capability{"says-yes": agent.CapabilityYes}},
			},
			provider: "a", model: "says-yes", providerSavedAfter: true,
		},
		{
			name:     "none answers: the assistant waits on ollama without a model",
			servers:  serversConnector{"http://a/v1": {down: true}},
			provider: agent.OllamaProvider, model: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, err := agent.New(t.Context(), agent.Config{
				History:   storetest.Open(t),
				Connector: tc.servers,
				// The provider "ollama" has no server here: Connect fails.
				LocalServers: []agent.Provider{
					{Name: agent.OllamaProvider, Kind: agent.ProviderOllama},
					{Name: "a", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://a/v1"},
					{Name: "b", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://b/v1"},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer core.Close()
			a, ok, err := core.Agents().EnsureDefault(t.Context(), "")
			if err != nil || !ok {
				t.Fatalf("EnsureDefaultAgent: %v, %v", ok, err)
			}
			if a.Provider != tc.provider || a.Model != tc.model {
				t.Errorf("assistant on %s/%s, want %s/%s", a.Provider, a.Model, tc.provider, tc.model)
			}
			_, saved := core.Providers().Get(tc.provider)
			if tc.providerSavedAfter && !saved {
				t.Errorf("the server found did not become a provider")
			}
			for _, p := range core.Providers().List() {
				if p.Name != agent.OllamaProvider && p.Name != tc.provider {
					t.Errorf("provider %s was saved, though not chosen", p.Name)
				}
			}
		})
	}
}

// echoingModel is a provider's model whose server echoes the key in its
// errors.
type echoingModel struct {
	*agenttest.Model
	key string
}

func (m echoingModel) ListModels(context.Context) ([]string, error) {
	return nil, agent.Userf(nil, "the server refused: Authorization: Bearer %s", m.key)
}

func (m echoingModel) DescribeModel(context.Context, string) (agent.ModelInfo, error) {
	return agent.ModelInfo{}, agent.Userf(nil, "the server refused: x-api-key=%s", m.key)
}

type echoingConnector struct{}

func (echoingConnector) Connect(_ agent.Provider, secret string) (agent.Model, error) {
	return echoingModel{Model: &agenttest.Model{}, key: secret}, nil
}

// TestProviderErrorsKeepNoKey: a server that echoes the provider's key in
// its errors has it taken out of what the core says, whatever its shape.
func TestProviderErrorsKeepNoKey(t *testing.T) {
	const key = "plain-provider-key-57"
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Connector: echoingConnector{}, Secrets: &agenttest.Secrets{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	if _, err := core.Providers().Save(t.Context(), agent.Provider{Name: "far", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://far.example"},
		agent.KeyChange{Set: true, Key: key}); err != nil {
		t.Fatal(err)
	}
	_, listErr := core.Providers().Models(t.Context(), "far")
	_, describeErr := core.Providers().DescribeModel(t.Context(), "far", "m")
	for _, err := range []error{listErr, describeErr} {
		if msg := agent.UserMessage(err); err == nil || strings.Contains(msg, key) || !strings.Contains(msg, "[redacted]") {
			t.Errorf("the error says %q", msg)
		}
	}
}
