package control_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
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

func listen(t *testing.T, path string, core control.Core) *control.Server {
	t.Helper()
	srv, err := control.Listen(path, core, control.Options{URL: "http://127.0.0.1:1/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv
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
	if _, ok := core.Authenticate(t.Context(), token); !ok {
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
	if _, ok := core.Authenticate(t.Context(), token); ok {
		t.Error("the token before rotation is still accepted")
	}
	if err := c.RevokeToken(t.Context(), "cursor"); err != nil {
		t.Fatal(err)
	}
	if _, ok := core.Authenticate(t.Context(), rotated); ok {
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
	if _, err := control.Listen(path, core, control.Options{URL: "http://127.0.0.1:1/mcp"}); !errors.Is(err, control.ErrAlreadyRunning) {
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
	srv, err := control.Listen(path, newCore(t), control.Options{Show: func() bool { shown++; return true }})
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
	if a, ok := core.AgentBySlug("writer"); !ok || a.Enabled {
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
