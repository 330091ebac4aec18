package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/store/storetest"
)

// listingConnector connects every provider to a model that lists two
// models, and records the key each was connected with.
type listingConnector struct {
	mu   sync.Mutex
	keys map[string]string
}

func (c *listingConnector) Connect(p agent.Provider, secret string) (agent.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[p.Name] = secret
	return listingModel{"model-a", "model-b"}, nil
}

type listingModel []string

func (listingModel) Chat(context.Context, agent.ChatRequest, func(agent.Delta)) (agent.ChatResponse, error) {
	return agent.ChatResponse{}, errors.New("not in this test")
}

func (m listingModel) ListModels(context.Context) ([]string, error) { return m, nil }

// lockedSecrets is memSecrets for a core whose control channel serves
// other goroutines.
type lockedSecrets struct {
	mu sync.Mutex
	memSecrets
}

func (s *lockedSecrets) Get(k string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memSecrets.Get(k)
}

func (s *lockedSecrets) Set(k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memSecrets.Set(k, v)
}

func (s *lockedSecrets) Delete(k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.memSecrets.Delete(k)
}

func (s *lockedSecrets) get(k string) string {
	v, _ := s.Get(k)
	return v
}

// runWith runs args with stdin and returns the exit status with what was
// printed.
func runWith(t *testing.T, env Env, stdin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = Exit(Run(t.Context(), env, args, strings.NewReader(stdin), &out, &errOut), &errOut)
	return status, out.String(), errOut.String()
}

// TestProviderCommands: providers added, listed, checked, edited and
// removed from the command line, on the core directly (the app not
// running) and through the running app's control channel; the key goes
// from stdin to the keychain and is printed nowhere.
func TestProviderCommands(t *testing.T) {
	for _, running := range []bool{false, true} {
		name := map[bool]string{false: "core", true: "control channel"}[running]
		t.Run(name, func(t *testing.T) {
			const key = "sk-ant-cli-5d1e0b7a-not-a-real-key"
			secrets := &lockedSecrets{memSecrets: memSecrets{m: map[string]string{}}}
			core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Secrets: secrets, Connector: &listingConnector{keys: map[string]string{}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			data, err := os.MkdirTemp("", "dh") // short: a socket path is limited
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(data) })
			env, rec := fakeEnv(t, map[string]string{"DESKHAND_DATA": data})
			if running {
				srv, err := control.Listen(control.SocketPath(data), control.CoreOf(core), control.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = srv.Close(context.Background()) })
			} else {
				env.Open = func(_ context.Context, g *Globals, _ io.Writer) (*Opened, error) {
					rec.ran = append(rec.ran, "open")
					return &Opened{Core: core, Secrets: secrets, Close: func() {}}, nil
				}
			}
			var printed strings.Builder
			run := func(stdin string, args ...string) (int, string, string) {
				t.Helper()
				status, stdout, stderr := runWith(t, env, stdin, args...)
				printed.WriteString(stdout + stderr)
				return status, stdout, stderr
			}
			want := func(wantStatus int, stdin string, args ...string) string {
				t.Helper()
				status, stdout, stderr := run(stdin, args...)
				if status != wantStatus {
					t.Errorf("%q: status %d, want %d\n%s%s", args, status, wantStatus, stdout, stderr)
				}
				return stdout + stderr
			}

			want(0, key+"\n", "provider", "add", "claude", "--kind", "anthropic", "--key-stdin")
			if got := secrets.get(agent.ProviderSecretKey("claude")); got != key {
				t.Errorf("the keychain holds %q, want the key read from stdin", got)
			}
			want(1, "", "provider", "add", "claude", "--kind", "openai")
			if out := want(0, "", "provider", "list"); !strings.Contains(out, "claude  anthropic  https://api.anthropic.com  yes  -") || !strings.Contains(out, "ollama  ollama     default                    no   -") {
				t.Errorf("provider list:\n%s", out)
			}
			if out := want(0, "", "provider", "check", "claude"); !strings.Contains(out, "model-a\nmodel-b\n") {
				t.Errorf("provider check:\n%s", out)
			}
			if out := want(1, "", "provider", "check", "nobody"); !strings.Contains(out, `no provider named "nobody"`) {
				t.Errorf("checking an unknown provider:\n%s", out)
			}

			// Agents on it.
			want(0, "", "agent", "add", "writer", "--provider", "claude", "--model", "model-a")
			if out := want(0, "", "agent", "list"); !strings.Contains(out, "PROVIDER") || !strings.Contains(out, "provider  claude    model-a") {
				t.Errorf("agent list:\n%s", out)
			}
			if out := want(0, "", "provider", "list"); !strings.Contains(out, "yes  writer") {
				t.Errorf("provider list with an agent:\n%s", out)
			}
			if out := want(1, "", "provider", "remove", "claude"); !strings.Contains(out, "used by writer") {
				t.Errorf("removing a provider in use:\n%s", out)
			}
			want(1, "", "agent", "edit", "writer", "--provider", "nobody")
			want(0, "", "agent", "edit", "writer", "--backend", "ollama")
			if a, _ := core.Agents().BySlug("writer"); a.Backend != agent.BackendProvider || a.Provider != agent.OllamaProvider {
				t.Errorf("--backend ollama: backend %q, provider %q", a.Backend, a.Provider)
			}
			want(0, "", "agent", "edit", "writer", "--backend", "client", "--provider", "claude")
			if a, _ := core.Agents().BySlug("writer"); a.Backend != agent.BackendClient || a.Provider != "claude" {
				t.Errorf("--backend client: backend %q, provider %q", a.Backend, a.Provider)
			}

			// Edits: the key from a Windows line, then removed; the kind.
			want(0, "k2\r\n", "provider", "edit", "claude", "--key-stdin")
			if got := secrets.get(agent.ProviderSecretKey("claude")); got != "k2" {
				t.Errorf("after edit --key-stdin the keychain holds %q", got)
			}
			want(0, "", "provider", "edit", "claude", "--url", "https://proxy.example/anthropic/")
			if p, _ := core.Providers().Get("claude"); p.BaseURL != "https://proxy.example/anthropic" || secrets.get(agent.ProviderSecretKey("claude")) != "k2" {
				t.Errorf("after edit --url: %+v", p)
			}
			want(0, "", "provider", "edit", "claude", "--remove-key")
			if _, err := secrets.Get(agent.ProviderSecretKey("claude")); !errors.Is(err, agent.ErrNotFound) {
				t.Errorf("after --remove-key: %v", err)
			}
			if out := want(1, "", "provider", "edit", "claude", "--kind", "openai-compatible"); !strings.Contains(out, "needs the server's address") {
				t.Errorf("openai-compatible without an address:\n%s", out)
			}
			want(0, "", "provider", "edit", "claude", "--kind", "openai-compatible", "--url", "http://127.0.0.1:1234/v1")
			if p, _ := core.Providers().Get("claude"); p.Kind != agent.ProviderOpenAICompatible || p.BaseURL != "http://127.0.0.1:1234/v1" {
				t.Errorf("after edit --kind --url: %+v", p)
			}
			if out := want(1, "", "provider", "edit", "nobody", "--url", "http://x:1"); !strings.Contains(out, `no provider named "nobody"`) {
				t.Errorf("editing an unknown provider:\n%s", out)
			}

			want(0, "", "agent", "remove", "writer")
			want(0, "", "provider", "remove", "claude")
			if _, ok := core.Providers().Get("claude"); ok {
				t.Error("claude is still there")
			}
			if strings.Contains(printed.String(), key) {
				t.Errorf("the key was printed:\n%s", printed.String())
			}
			if opened := strings.Contains(strings.Join(rec.ran, " "), "open"); opened == running {
				t.Errorf("ran %v: with the app running, commands go through its channel; else they open the store", rec.ran)
			}
		})
	}
}

// TestProviderKeyNeverOnTheCommandLine: a key given as a flag or argument
// is refused before anything runs, and never repeated.
func TestProviderKeyNeverOnTheCommandLine(t *testing.T) {
	const key = "sk-argv-0c4f-not-a-real-key"
	for _, args := range [][]string{
		{"provider", "add", "claude", "--kind", "anthropic", "--key", key},
		{"provider", "add", "claude", "--key=" + key, "--kind", "anthropic"},
		{"--key", key, "provider", "edit", "claude"},
		{"provider", "list", "--key", key},
		{"provider", "add", "claude", key, "--kind", "anthropic"},
		{"provider", "edit", "claude", "--key", key, "--key", key},
	} {
		env, rec := fakeEnv(t, nil)
		status, stdout, stderr := runLine(t, env, args...)
		if status != 2 || len(rec.ran) > 0 || strings.Contains(stdout+stderr, key) {
			t.Errorf("%q: status %d, ran %v\n%s%s", args, status, rec.ran, stdout, stderr)
		}
		if strings.Contains(strings.Join(args, " "), "--key") && !strings.Contains(stderr, "--key-stdin") {
			t.Errorf("%q: the refusal does not point to --key-stdin:\n%s", args, stderr)
		}
	}
}

// TestReadKey: one line of stdin, without its line break; never empty.
func TestReadKey(t *testing.T) {
	for _, c := range []struct {
		stdin, want string
		wantErr     bool
	}{
		{"sk-1\n", "sk-1", false},
		{"sk-1", "sk-1", false},
		{"sk-1\r\n", "sk-1", false},
		{"sk-1\nsecond line\n", "sk-1", false},
		{" sk-1 \n", " sk-1 ", false}, // the core refuses spaces, with a message
		{"", "", true},
		{"\n", "", true},
		{strings.Repeat("k", maxKeyLen+5), "", true},
	} {
		got, err := readKey(strings.NewReader(c.stdin))
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("readKey(%.20q) = %q, %v", c.stdin, got, err)
		}
		if err != nil && strings.Contains(agent.UserMessage(err), "kkkk") {
			t.Errorf("the error repeats what was read: %v", err)
		}
	}
	env, rec := fakeEnv(t, nil)
	if status, _, stderr := runLine(t, env, "provider", "add", "claude", "--kind", "anthropic", "--key-stdin"); status != 1 || len(rec.ran) > 0 || !strings.Contains(stderr, "read no API key") {
		t.Errorf("an empty stdin: status %d, ran %v\n%s", status, rec.ran, stderr)
	}
}
