package control_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/store/storetest"
)

// socketPath is short: Unix socket paths are limited to about 100 bytes,
// and t.TempDir() names can be long.
func socketPath(t *testing.T) string {
	dir, err := os.MkdirTemp("", "dh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return control.SocketPath(dir)
}

func newCore(t *testing.T) *agent.Core {
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	return core
}

func listen(t *testing.T, path string, core *agent.Core) *control.Server {
	t.Helper()
	srv, err := control.Listen(path, control.CoreOf(core), control.Options{URL: "http://127.0.0.1:1/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv
}

// dialed serves core on a control channel of its own and dials it.
func dialed(t *testing.T, core *agent.Core) *control.Client {
	t.Helper()
	path := socketPath(t)
	listen(t, path, core)
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokensThroughTheSocket(t *testing.T) {
	path := socketPath(t)
	core := newCore(t)
	listen(t, path, core)

	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Status(t.Context()); err != nil || st.URL != "http://127.0.0.1:1/mcp" {
		t.Errorf("status = %+v, %v", st, err)
	}
	token, err := c.CreateToken(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := core.Clients().Authenticate(t.Context(), token); !ok {
		t.Fatal("token created over the socket is not accepted by the running core")
	}
	if _, err := c.CreateToken(t.Context(), "cursor"); err == nil || !strings.Contains(agent.UserMessage(err), "already exists") {
		t.Errorf("duplicate name: %v", err)
	}
	list, err := c.Tokens(t.Context())
	if err != nil || len(list) != 1 || list[0].Name != "cursor" || list[0].CreatedAt.IsZero() {
		t.Fatalf("tokens = %+v, %v", list, err)
	}
	rotated, err := c.RotateToken(t.Context(), "cursor")
	if err != nil || rotated == token {
		t.Fatalf("rotate = %q, %v", rotated, err)
	}
	if _, ok := core.Clients().Authenticate(t.Context(), token); ok {
		t.Error("the token before rotation is still accepted")
	}
	if err := c.RevokeToken(t.Context(), "cursor"); err != nil {
		t.Fatal(err)
	}
	if _, ok := core.Clients().Authenticate(t.Context(), rotated); ok {
		t.Error("revoked token still accepted")
	}
	if err := c.RevokeToken(t.Context(), "cursor"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("revoking twice: %v", err)
	}
}

func TestSecondInstanceIsRefused(t *testing.T) {
	path := socketPath(t)
	core := newCore(t)
	listen(t, path, core)
	if _, err := control.Listen(path, control.CoreOf(core), control.Options{URL: "http://127.0.0.1:1/mcp"}); !errors.Is(err, control.ErrAlreadyRunning) {
		t.Errorf("second Listen: %v, want ErrAlreadyRunning", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	path := socketPath(t)
	// What a killed process leaves: a socket file nobody listens on.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := control.Dial(path); !errors.Is(err, control.ErrNotRunning) {
		t.Fatalf("dial stale socket: %v", err)
	}
	listen(t, path, newCore(t))
	if _, err := control.Dial(path); err != nil {
		t.Errorf("after replacing the stale socket: %v", err)
	}
}

func TestNotRunning(t *testing.T) {
	if _, err := control.Dial(socketPath(t)); !errors.Is(err, control.ErrNotRunning) {
		t.Errorf("err = %v", err)
	}
}

func TestBrowserRequestsRefused(t *testing.T) {
	path := socketPath(t)
	listen(t, path, newCore(t))
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://deskhand/v1/tokens", nil)
	req.Header.Set("Origin", "http://evil.example")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
}

func TestQuestionsThroughTheSocket(t *testing.T) {
	path := socketPath(t)
	listen(t, path, newCore(t))
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := c.Questions(t.Context())
	if err != nil || len(qs) != 0 {
		t.Fatalf("questions = %+v, %v", qs, err)
	}
	err = c.Answer(t.Context(), "no-such-question", map[string]any{"answer": "x"}, false)
	if err == nil || !strings.Contains(agent.UserMessage(err), "no longer open") {
		t.Errorf("answering an unknown question: %v", err)
	}
}

func TestShowWindow(t *testing.T) {
	path := socketPath(t)
	shown := 0
	srv, err := control.Listen(path, control.CoreOf(newCore(t)), control.Options{Show: func() bool { shown++; return true }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	c, _ := control.Dial(path)
	if err := c.ShowWindow(t.Context()); err != nil || shown != 1 {
		t.Fatalf("show: %v (shown %d)", err, shown)
	}
	headless := socketPath(t)
	listen(t, headless, newCore(t))
	c, _ = control.Dial(headless)
	if err := c.ShowWindow(t.Context()); err == nil || !strings.Contains(agent.UserMessage(err), "headless") {
		t.Errorf("headless show: %v", err)
	}
}

func TestAgentsThroughTheSocket(t *testing.T) {
	path := socketPath(t)
	core := newCore(t)
	listen(t, path, core)
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	saved, err := c.SaveAgent(ctx, agent.Agent{Name: "Writer", Slug: "writer", Backend: agent.BackendOllama, Model: "m", Enabled: true})
	if err != nil || saved.ID == "" {
		t.Fatalf("save = %+v, %v", saved, err)
	}
	if _, err := c.SaveAgent(ctx, agent.Agent{Name: "Bad", Slug: "Has Space", Backend: agent.BackendOllama}); err == nil || !strings.Contains(agent.UserMessage(err), "slug") {
		t.Errorf("a bad slug: %v", err)
	}
	if err := c.SetAgentEnabled(ctx, "writer", false); err != nil {
		t.Fatal(err)
	}
	if a, ok := core.Agents().BySlug("writer"); !ok || a.Enabled {
		t.Errorf("the running core sees %+v", a)
	}
	list, err := c.Agents(ctx)
	if err != nil || len(list) != 1 || list[0].Slug != "writer" || list[0].Enabled {
		t.Errorf("agents = %+v, %v", list, err)
	}
	if err := c.DeleteAgent(ctx, "writer"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteAgent(ctx, "writer"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	if err := c.SetAgentEnabled(ctx, "nobody", true); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("enabling an unknown agent: %v", err)
	}
}

// listingConnector connects every provider to a model that lists models,
// and records the key each connection was given.
type listingConnector struct {
	mu      sync.Mutex
	secrets map[string]string // provider name → key it connected with
}

func (c *listingConnector) Connect(p agent.Provider, secret string) (agent.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.secrets[p.Name] = secret
	return listingModel{"model-a", "model-b"}, nil
}

func (c *listingConnector) secretOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.secrets[name]
}

type listingModel []string

func (listingModel) Chat(context.Context, agent.ChatRequest, func(agent.Delta)) (agent.ChatResponse, error) {
	return agent.ChatResponse{}, errors.New("not in this test")
}

func (m listingModel) ListModels(context.Context) ([]string, error) { return m, nil }

func TestProvidersThroughTheSocket(t *testing.T) {
	const key = "sk-ant-7f3c9e1d-not-a-real-key"
	secrets := &agenttest.Secrets{}
	connector := &listingConnector{secrets: map[string]string{}}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Secrets: secrets, Connector: connector})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	c := dialed(t, core)
	ctx := t.Context()

	// Errors never repeat the key, whatever was wrong.
	for _, bad := range []agent.Provider{{Name: "Not Valid", Kind: agent.ProviderAnthropic}, {Name: "x", Kind: "nope"}} {
		if _, err := c.SaveProvider(ctx, bad, agent.KeyChange{Set: true, Key: key}); err == nil || strings.Contains(err.Error(), key) || strings.Contains(agent.UserMessage(err), key) {
			t.Errorf("saving %+v: %v", bad, err)
		}
	}
	if _, err := c.SaveProvider(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic}, agent.KeyChange{Set: true, Key: key + "\n"}); err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("a key with a line break: %v", err)
	}
	for _, name := range []string{"Not Valid", "x", "claude"} {
		if _, err := secrets.Get(agent.ProviderSecretKey(name)); !errors.Is(err, agent.ErrNotFound) {
			t.Fatalf("a refused save of %q reached the keychain (%v)", name, err)
		}
	}

	saved, err := c.SaveProvider(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic}, agent.KeyChange{Set: true, Key: key})
	if err != nil || saved.Name != "claude" || saved.BaseURL != "https://api.anthropic.com" {
		t.Fatalf("save = %+v, %v", saved, err)
	}
	if got, _ := secrets.Get(agent.ProviderSecretKey("claude")); got != key {
		t.Errorf("the keychain holds %q", got)
	}
	if p, ok := core.Providers().Get("claude"); !ok || p.Kind != agent.ProviderAnthropic {
		t.Errorf("the running core sees %+v, %v", p, ok)
	}
	list, err := c.Providers(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "claude" || !list[0].HasKey || list[1].Name != agent.OllamaProvider || list[1].HasKey {
		t.Fatalf("providers = %+v, %v", list, err)
	}

	models, err := c.ProviderModels(ctx, "claude")
	if err != nil || strings.Join(models, ",") != "model-a,model-b" {
		t.Errorf("models = %q, %v", models, err)
	}
	if got := connector.secretOf("claude"); got != key {
		t.Errorf("the provider was connected with %q, not its key", got)
	}
	if _, err := c.ProviderModels(ctx, "nobody"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("models of an unknown provider: %v", err)
	}

	// Saving without a key change keeps the key; an empty key removes it.
	if _, err := c.SaveProvider(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic, BaseURL: "https://proxy.example/anthropic"}, agent.KeyChange{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := secrets.Get(agent.ProviderSecretKey("claude")); got != key {
		t.Errorf("an edit without a key change lost the key: %q", got)
	}
	if _, err := c.SaveProvider(ctx, agent.Provider{Name: "claude", Kind: agent.ProviderAnthropic}, agent.KeyChange{Set: true}); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.Providers(ctx); len(list) != 2 || list[0].HasKey {
		t.Errorf("after removing the key: %+v", list)
	}

	// A provider in use is kept.
	if _, err := c.SaveAgent(ctx, agent.Agent{Slug: "writer", Backend: agent.BackendProvider, Provider: "claude", Model: "model-a"}); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.Providers(ctx); len(list) != 2 || strings.Join(list[0].UsedBy, ",") != "writer" {
		t.Errorf("used by: %+v", list)
	}
	if err := c.DeleteProvider(ctx, "claude"); err == nil || !strings.Contains(agent.UserMessage(err), "writer") {
		t.Errorf("deleting a provider in use: %v", err)
	}
	if err := c.DeleteAgent(ctx, "writer"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteProvider(ctx, "claude"); err != nil {
		t.Fatal(err)
	}
	if _, ok := core.Providers().Get("claude"); ok {
		t.Error("the running core still has the deleted provider")
	}
	if err := c.DeleteProvider(ctx, "claude"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

// TestProviderBodyNotRepeated: a save the channel cannot read is refused
// with what the body must be, never with what it was (it holds a key).
func TestProviderBodyNotRepeated(t *testing.T) {
	const key = "sk-ant-body-3b8e-not-a-real-key"
	path := socketPath(t)
	listen(t, path, newCore(t))
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	for _, body := range []string{`{"provider": {"Name": "claude"}, "setKey": true, "key": "` + key, `{"provider": "` + key + `"}`, `{"key": ` + key + `}`} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://deskhand/v1/providers", strings.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusBadRequest || strings.Contains(string(got), key) || strings.Contains(string(got), "sk-ant") {
			t.Errorf("body %q: status %d, reply %q, %v", body, resp.StatusCode, got, err)
		}
	}
}
