package connect

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/bridge"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store/storetest"
)

// The test binary doubles as the stdio bridge that Claude Desktop's entry
// starts: with bridgeEnv set it relays stdin/stdout to the URL in that
// variable, with the token it reads from the secrets file, as
// `deskhand stdio --client claude-desktop` does with the keychain.
const (
	bridgeEnv  = "DESKHAND_CONNECT_TEST_BRIDGE"
	secretsEnv = "DESKHAND_CONNECT_TEST_SECRETS"
)

func TestMain(m *testing.M) {
	if u := os.Getenv(bridgeEnv); u != "" {
		secrets := fileSecrets{path: os.Getenv(secretsEnv)}
		token, err := secrets.Get(SecretKey(ClaudeDesktop.ID))
		if err != nil {
			fmt.Fprintln(os.Stderr, "no token:", err)
			os.Exit(1)
		}
		b := &bridge.Bridge{URL: u, Token: token}
		if err := b.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fileSecrets is a keychain in a JSON file, readable by the bridge process.
type fileSecrets struct {
	mu   sync.Mutex
	path string
}

func (s *fileSecrets) load() (map[string]string, error) {
	m := map[string]string{}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	return m, err
}

func (s *fileSecrets) Get(key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return "", err
	}
	v, ok := m[key]
	if !ok {
		return "", agent.ErrNotFound
	}
	return v, nil
}

func (s *fileSecrets) update(f func(map[string]string)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	f(m)
	data, _ := json.Marshal(m)
	return os.WriteFile(s.path, data, 0o600)
}

func (s *fileSecrets) Set(key, value string) error {
	return s.update(func(m map[string]string) { m[key] = value })
}

func (s *fileSecrets) Delete(key string) error {
	return s.update(func(m map[string]string) { delete(m, key) })
}

// coreTokens issues tokens on a real core, as main does through the
// control channel.
type coreTokens struct{ core *agent.Core }

func (t coreTokens) Rotate(ctx context.Context, name string) (string, error) {
	_, token, err := t.core.Clients().Rotate(ctx, name)
	return token, err
}

func (t coreTokens) Revoke(ctx context.Context, name string) error {
	return t.core.Clients().Revoke(ctx, name)
}

// running is a real Deskhand server on 127.0.0.1 with a fake Ollama.
type running struct {
	url  string
	core *agent.Core
	http *httptest.Server
}

func startDeskhand(t *testing.T) *running {
	t.Helper()
	db := storetest.Open(t)
	model, err := ollama.New(ollamatest.NewServer(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	core, err := agent.New(t.Context(), agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := core.Agents().EnsureDefault(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.CoreOf(core), mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	r := &running{url: hs.URL + mcpserver.EndpointPath, core: core, http: hs}
	t.Cleanup(func() {
		r.stop()
		core.Close()
		_ = srv.Close(context.Background())
	})
	return r
}

func (r *running) stop() {
	r.http.CloseClientConnections()
	r.http.Close()
}

// realFiles puts a real-looking file of every client into env's home.
func realFiles(t *testing.T, env Env) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for c, text := range map[Client]string{
		Cursor: cursorFixture, ClaudeCode: claudeCodeFixture, VSCode: vscodeFixture,
		Windsurf: windsurfFixture, Codex: codexFixture, ClaudeDesktop: desktopFixture,
		Gemini: geminiFixture, Qwen: qwenFixture, OpenCode: openCodeFixture, Zed: zedFixture, LMStudio: lmStudioFixture, Goose: gooseFixture,
	} {
		p, _ := Path(c, env)
		writeFile(t, p, []byte(text), 0o644)
		files[c.ID] = []byte(text)
	}
	return files
}

func newManager(t *testing.T, r *running, env Env) (*Manager, *fileSecrets) {
	t.Helper()
	secrets := &fileSecrets{path: filepath.Join(t.TempDir(), "secrets.json")}
	t.Setenv(bridgeEnv, r.url)
	t.Setenv(secretsEnv, secrets.path)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Manager{Env: env, URL: r.url, Command: exe, Args: []string{"-test.run=^$"},
		Tokens: coreTokens{r.core}, Secrets: secrets, Timeout: 30 * time.Second}, secrets
}

func tokenNames(core *agent.Core) []string {
	var names []string
	for _, c := range core.Clients().List() {
		names = append(names, c.Name)
	}
	return names
}

func TestManagerConnectsEveryClient(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	before := realFiles(t, env)
	m, secrets := newManager(t, r, env)
	ctx := t.Context()

	for _, c := range Clients() {
		rep, err := m.Connect(ctx, c, ConnectOptions{})
		if err != nil {
			t.Fatalf("Connect(%s): %v", c.ID, err)
		}
		if rep.Action != Wrote || rep.Check.Health != Verified || rep.Check.Tools < 1 || rep.Hint == "" {
			t.Errorf("Connect(%s) = %+v", c.ID, rep)
		}
		after := readFile(t, rep.State.Path)
		checkKept(t, before[c.ID], after)
		if !cmp.Equal(rest(c, decode(t, c, after)), rest(c, decode(t, c, before[c.ID]))) {
			t.Errorf("%s: the rest of the file changed", c.ID)
		}
		if c.ID == ClaudeDesktop.ID && bytes.Contains(after, []byte("dh_")) {
			t.Errorf("Claude Desktop's file holds a token:\n%s", after)
		}
	}
	// Each client has its own token; Claude Desktop's is in the keychain.
	if got, want := tokenNames(r.core), []string{"claude-code", "claude-desktop", "codex", "cursor", "gemini", "goose", "lmstudio", "opencode", "qwen", "vscode", "windsurf", "zed"}; !cmp.Equal(got, want) {
		t.Errorf("tokens = %v, want %v", got, want)
	}
	if tok, err := secrets.Get(SecretKey(ClaudeDesktop.ID)); err != nil || !strings.HasPrefix(tok, "dh_") {
		t.Errorf("keychain token = %q, %v", tok, err)
	}

	// A second run verifies and writes nothing: same bytes, same mtime.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range Clients() {
		p, _ := Path(c, env)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Connect(ctx, c, ConnectOptions{})
		if err != nil || rep.Action != NoAction || rep.Check.Health != Verified {
			t.Errorf("second Connect(%s) = %+v, %v", c.ID, rep, err)
		}
		if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
			t.Errorf("second Connect(%s) touched the file", c.ID)
		}
	}

	// A revoked token is reported as such, over HTTP and through the bridge.
	for _, c := range []Client{Cursor, ClaudeDesktop} {
		if err := r.core.Clients().Revoke(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		rep, err := m.Status(ctx, c)
		if err != nil || rep.Check.Health != TokenRefused {
			t.Errorf("Status(%s) after revoke = %+v, %v", c.ID, rep.Check, err)
		}
		// Connecting again issues a new token and works.
		rep, err = m.Connect(ctx, c, ConnectOptions{})
		if err != nil || rep.Action != Wrote || rep.Check.Health != Verified {
			t.Errorf("reconnect(%s) = %+v, %v", c.ID, rep, err)
		}
	}

	// Rotate replaces a working token; the principal stays the same.
	id := r.core.Clients().List()[3].ID // cursor
	if rep, err := m.Connect(ctx, Cursor, ConnectOptions{Rotate: true}); err != nil || rep.Action != Wrote || rep.Check.Health != Verified {
		t.Errorf("rotate = %+v, %v", rep, err)
	}
	if got := r.core.Clients().List()[3]; got.Name != "cursor" || got.ID != id {
		t.Errorf("rotation changed the principal: %+v", got)
	}

	// A stopped app is reported as such, and a connect then writes nothing.
	r.stop()
	for _, c := range Clients() {
		rep, err := m.Status(ctx, c)
		if err != nil || rep.Check.Health != NotRunning {
			t.Errorf("Status(%s) with Deskhand stopped = %+v, %v", c.ID, rep.Check, err)
		}
		p, _ := Path(c, env)
		snapshot := readFile(t, p)
		if rep, err := m.Connect(ctx, c, ConnectOptions{}); err != nil || rep.Action != NoAction || !bytes.Equal(readFile(t, p), snapshot) {
			t.Errorf("Connect(%s) with Deskhand stopped = %+v, %v", c.ID, rep, err)
		}
	}

	// Disconnect removes exactly our entry and revokes the token.
	for _, c := range Clients() {
		rep, err := m.Disconnect(ctx, c)
		if err != nil || rep.Action != Removed {
			t.Errorf("Disconnect(%s) = %+v, %v", c.ID, rep, err)
		}
		after := readFile(t, rep.Result.Path)
		if !cmp.Equal(rest(c, decode(t, c, after)), rest(c, decode(t, c, before[c.ID]))) {
			t.Errorf("%s: Disconnect changed the rest of the file", c.ID)
		}
	}
	if names := tokenNames(r.core); len(names) != 0 {
		t.Errorf("tokens left after disconnecting everything: %v", names)
	}
	if _, err := secrets.Get(SecretKey(ClaudeDesktop.ID)); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("Claude Desktop's token still in the keychain: %v", err)
	}
}

func TestManagerRefusesBeforeMinting(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	m, _ := newManager(t, r, env)
	ctx := t.Context()

	// An invalid file: error, untouched, no token issued.
	p, _ := Path(Cursor, env)
	bad := []byte(`{"mcpServers": {"x": }`)
	writeFile(t, p, bad, 0o644)
	var perr *ParseError
	if _, err := m.Connect(ctx, Cursor, ConnectOptions{}); !errors.As(err, &perr) {
		t.Errorf("Connect on an invalid file: %v", err)
	}
	if !bytes.Equal(readFile(t, p), bad) || len(r.core.Clients().List()) != 0 {
		t.Errorf("invalid file touched or a token issued: %v", tokenNames(r.core))
	}

	// Not installed: refused, nothing created.
	if _, err := m.Connect(ctx, Windsurf, ConnectOptions{}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Connect of a client not installed: %v", err)
	}
	if Installed(Windsurf, env) {
		t.Error("connecting a client that is not installed created its folder")
	}

	// Dry run: nothing written, nothing minted; the preview has no token.
	p, _ = Path(Codex, env)
	writeFile(t, p, []byte(codexFixture), 0o644)
	rep, err := m.Connect(ctx, Codex, ConnectOptions{DryRun: true})
	if err != nil || rep.Action != WouldWrite || string(readFile(t, p)) != codexFixture || len(r.core.Clients().List()) != 0 {
		t.Errorf("dry run = %+v, %v", rep, err)
	}
	preview, err := m.Preview(Codex)
	if err != nil || !strings.Contains(preview, "[mcp_servers.deskhand]") || !strings.Contains(preview, r.url) || !strings.Contains(preview, "<a new token for codex>") {
		t.Errorf("preview = %q, %v", preview, err)
	}

	preview, err = m.Preview(Cursor)
	if err != nil || !strings.Contains(preview, `"Authorization": "Bearer <a new token for cursor>"`) {
		t.Errorf("cursor preview = %s, %v", preview, err)
	}

	// An entry that points elsewhere is stale, and connecting fixes it.
	other := *m
	other.URL = "http://127.0.0.1:1/mcp"
	if rep, err := other.Connect(ctx, Codex, ConnectOptions{}); err != nil || rep.Action != Wrote {
		t.Fatalf("connect elsewhere = %+v, %v", rep, err)
	}
	if rep, err := m.Status(ctx, Codex); err != nil || rep.Check.Health != Stale {
		t.Errorf("Status of an entry pointing elsewhere = %+v, %v", rep.Check, err)
	}
	if rep, err := m.Connect(ctx, Codex, ConnectOptions{}); err != nil || rep.Check.Health != Verified {
		t.Errorf("Connect of a stale entry = %+v, %v", rep, err)
	}
}

func TestManagerProjectScope(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	env.Project = t.TempDir()
	m, _ := newManager(t, r, env)
	ctx := t.Context()
	files := map[string]string{Cursor.ID: ".cursor/mcp.json", ClaudeCode.ID: ".mcp.json", VSCode.ID: ".vscode/mcp.json",
		Gemini.ID: ".gemini/settings.json", Qwen.ID: ".qwen/settings.json", OpenCode.ID: "opencode.json", Zed.ID: ".zed/settings.json"}
	for _, c := range []Client{Cursor, ClaudeCode, VSCode, Gemini, Qwen, OpenCode, Zed} {
		rep, err := m.Connect(ctx, c, ConnectOptions{})
		want := Verified
		if c == ClaudeCode || c == Qwen || c == Gemini {
			want = AwaitsApproval // see TestTurnedOffOutsideItsFile, TestQwenProjectApproval, TestGeminiFolderTrust
		}
		if err != nil || rep.Check.Health != want {
			t.Fatalf("Connect(%s) in a project = %+v, %v", c.ID, rep, err)
		}
		if rep.State.Path != filepath.Join(env.Project, filepath.FromSlash(files[c.ID])) || !strings.Contains(rep.Hint, ".gitignore") {
			t.Errorf("%s: path %s, hint %q", c.ID, rep.State.Path, rep.Hint)
		}
		if !strings.HasPrefix(m.TokenName(c), c.ID+"@") {
			t.Errorf("project token name %q", m.TokenName(c))
		}
	}
	if _, err := Path(Cursor, Env{Home: env.Home}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Client{Windsurf, LMStudio, Goose} {
		if _, err := m.Connect(ctx, c, ConnectOptions{}); !errors.Is(err, ErrNoProjectScope) {
			t.Errorf("%s in a project: %v", c.Name, err)
		}
	}
	for _, c := range []Client{Gemini, Qwen, Zed} {
		if h := m.hint(c); !strings.Contains(h, "trust the folder") {
			t.Errorf("%s: project hint %q", c.ID, h)
		}
	}
	// The user-level Cursor file was not touched.
	if p, _ := Path(Cursor, Env{Home: env.Home}); exists(p) {
		t.Errorf("project connect wrote %s", p)
	}
}

func TestDeeplinks(t *testing.T) {
	link, config, err := Deeplink(Cursor, "deskhand", "http://127.0.0.1:7345/mcp", "dh_T")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "cursor" || u.Host != "anysphere.cursor-deeplink" || u.Path != "/mcp/install" || u.Query().Get("name") != "deskhand" {
		t.Fatalf("cursor link %q: %v", link, err)
	}
	raw, err := base64.StdEncoding.DecodeString(u.Query().Get("config"))
	if err != nil || string(raw) != config {
		t.Fatalf("cursor config %q, %v", raw, err)
	}
	var entry map[string]any
	if err := json.Unmarshal(raw, &entry); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": "http://127.0.0.1:7345/mcp", "headers": map[string]any{"Authorization": "Bearer dh_T"}}
	if !cmp.Equal(entry, want) {
		t.Errorf("cursor entry = %v", entry)
	}

	link, _, err = Deeplink(VSCode, "deskhand", "http://127.0.0.1:7345/mcp", "dh_T")
	if err != nil || !strings.HasPrefix(link, "vscode:mcp/install?") || strings.ContainsAny(link, " +{\"") {
		t.Fatalf("vscode link %q, %v", link, err)
	}
	decoded, err := url.PathUnescape(strings.TrimPrefix(link, "vscode:mcp/install?"))
	if err != nil {
		t.Fatal(err)
	}
	entry = nil
	if err := json.Unmarshal([]byte(decoded), &entry); err != nil {
		t.Fatal(err)
	}
	want["name"], want["type"] = "deskhand", "http"
	if !cmp.Equal(entry, want) {
		t.Errorf("vscode entry = %v", entry)
	}
	if _, _, err := Deeplink(ClaudeDesktop, "deskhand", "http://x/mcp", "t"); err == nil {
		t.Error("a Claude Desktop link was made; its token must never be in a link")
	}
}

func TestManagerLinkReusesAWorkingToken(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	writeFile(t, filepath.Join(env.Home, ".cursor", "mcp.json"), []byte(cursorFixture), 0o644)
	m, _ := newManager(t, r, env)
	if _, err := m.Connect(t.Context(), Cursor, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	link, config, err := m.Link(t.Context(), Cursor)
	if err != nil || !strings.HasPrefix(link, "cursor://") {
		t.Fatalf("Link = %q, %v", link, err)
	}
	// The link carries the token the file holds, so the file keeps working.
	if rep, _ := m.Status(t.Context(), Cursor); rep.Check.Health != Verified || !strings.Contains(config, rep.State.token) {
		t.Errorf("after Link: %+v; config %s", rep.Check, config)
	}
	if _, _, err := m.Link(t.Context(), Codex); err == nil {
		t.Error("a link for Codex")
	}
}

// TestVerifyLeavesNoGoroutine: a verification (HTTP, or a spawned stdio
// entry) ends everything it started.
func TestVerifyLeavesNoGoroutine(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	realFiles(t, env)
	m, _ := newManager(t, r, env)
	for _, c := range []Client{Cursor, ClaudeDesktop} {
		if _, err := m.Connect(t.Context(), c, ConnectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ignore := goleak.IgnoreCurrent()
	for _, c := range []Client{Cursor, ClaudeDesktop} {
		if rep, err := m.Status(t.Context(), c); err != nil || rep.Check.Health != Verified {
			t.Fatalf("Status(%s) = %+v, %v", c.ID, rep.Check, err)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// TestManagerRefusesALinkOutOfTheProject: the link is refused before a
// token is minted, and the file it leads to is left as it was.
func TestManagerRefusesALinkOutOfTheProject(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	root := t.TempDir()
	env.Project = filepath.Join(root, "repo")
	outside := filepath.Join(root, "elsewhere", "settings.json")
	writeFile(t, outside, []byte(`{"mcpServers": {}}`), 0o644)
	symlink(t, filepath.Join("..", "..", "elsewhere", "settings.json"), filepath.Join(env.Project, ".cursor", "mcp.json"))
	m, _ := newManager(t, r, env)
	var ue *UnsafePathError
	if _, err := m.Connect(t.Context(), Cursor, ConnectOptions{}); !errors.As(err, &ue) || ue.Problem != LeavesProject {
		t.Errorf("Connect = %v", err)
	}
	if len(r.core.Clients().List()) != 0 || string(readFile(t, outside)) != `{"mcpServers": {}}` || fileMode(t, outside) != 0o644 {
		t.Errorf("a token was issued or the file outside written: %v", tokenNames(r.core))
	}
}

// TestManagerBringsAWorkingEntryUpToDate: an entry that verifies but was
// written before Deskhand wrote a tool-call timeout gets the timeout, with
// the token it has (none minted, none revoked); then it is left alone.
func TestManagerBringsAWorkingEntryUpToDate(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	realFiles(t, env)
	m, _ := newManager(t, r, env)
	ctx := t.Context()
	timeoutLine := regexp.MustCompile(`(?m),\s*"timeout": 660\d*|^.*timeout.* 660\r?\n`)
	for _, c := range []Client{Codex, Gemini, Zed, Goose} {
		if rep, err := m.Connect(ctx, c, ConnectOptions{}); err != nil || rep.Action != Wrote {
			t.Fatalf("Connect(%s) = %+v, %v", c.ID, rep, err)
		}
		p, _ := Path(c, env)
		full := readFile(t, p)
		old := timeoutLine.ReplaceAll(full, nil)
		if bytes.Equal(old, full) {
			t.Fatalf("%s: no timeout written:\n%s", c.ID, full)
		}
		writeFile(t, p, old, 0o600)
		before, _ := Status(c, env, "")
		if rep, err := m.Connect(ctx, c, ConnectOptions{DryRun: true}); err != nil || rep.Action != WouldWrite || !bytes.Equal(readFile(t, p), old) {
			t.Errorf("dry run (%s) = %+v, %v", c.ID, rep, err)
		}
		rep, err := m.Connect(ctx, c, ConnectOptions{})
		if err != nil || rep.Action != Wrote || rep.Result.Backup == "" {
			t.Fatalf("Connect(%s) of an entry without a timeout = %+v, %v", c.ID, rep, err)
		}
		if got := readFile(t, p); !bytes.Equal(got, full) {
			t.Errorf("%s: entry not brought up to date:\n%s\nwant:\n%s", c.ID, got, full)
		}
		if after, _ := Status(c, env, ""); after.token != before.token {
			t.Errorf("%s: the token changed", c.ID)
		}
		if rep, err := m.Status(ctx, c); err != nil || rep.Check.Health != Verified {
			t.Errorf("Status(%s) = %+v, %v", c.ID, rep.Check, err)
		}
		if rep, err := m.Connect(ctx, c, ConnectOptions{}); err != nil || rep.Action != NoAction {
			t.Errorf("third Connect(%s) = %+v, %v", c.ID, rep, err)
		}
	}
	if got := len(r.core.Clients().List()); got != 4 {
		t.Errorf("%d tokens, want 4 (one per client, none rotated away)", got)
	}
	if preview, err := m.Preview(Goose); err != nil || !strings.Contains(preview, "extensions:\n  deskhand:\n") || !strings.Contains(preview, "<a new token for goose>") {
		t.Errorf("goose preview = %q, %v", preview, err)
	}
}
