package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	_ "github.com/mattn/go-sqlite3"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/ui/connect"
)

// asMainEnv makes the test binary run main() instead of the tests, so that
// a config entry naming os.Executable() runs deskhand, as it does for users.
const asMainEnv = "DESKHAND_TEST_AS_MAIN"

// lockDBEnv makes the test binary hold the write lock of the database it
// names until its standard input closes: another program using the file.
const lockDBEnv = "DESKHAND_TEST_LOCK_DB"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	if path := os.Getenv(lockDBEnv); path != "" {
		holdWriteLock(path)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func holdWriteLock(path string) {
	db, err := sql.Open("sqlite3", path)
	if err == nil {
		_, err = db.Exec("BEGIN IMMEDIATE")
	}
	if err != nil {
		fmt.Println("lock failed:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// fakeHome gives the test a home folder where all twelve clients are
// installed, with files like a real user's (the new clients' from
// ui/connect's fixtures: comments, CRLF, other servers, stale entries),
// and no keychain (secrets go to the data folder's fallback file, never
// to a real keychain).
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(home, "no-bus"))
	t.Setenv(asMainEnv, "1")
	files := map[string]string{
		".cursor/mcp.json":                          `{"mcpServers": {"github": {"url": "https://api.githubcopilot.com/mcp/"}}}`,
		".claude.json":                              "{\r\n  \"numStartups\": 3,\r\n  \"userID\": \"abc\"\r\n}\r\n",
		".config/Code/User/mcp.json":                "// mine\n{\n\t\"servers\": {\n\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\",},\n\t},\n}\n",
		".codeium/windsurf/mcp_config.json":         `{"mcpServers":{}}`,
		".codex/config.toml":                        "# mine\nmodel = \"o3\"\n",
		".config/Claude/claude_desktop_config.json": `{"mcpServers": {"weather": {"command": "node"}}}`,
	}
	for name, fixture := range map[string]string{
		".gemini/settings.json":           "gemini-settings.json",
		".qwen/settings.json":             "qwen-crlf.json",
		".config/opencode/opencode.jsonc": "opencode.jsonc",
		".config/zed/settings.json":       "zed-settings.json",
		".lmstudio/mcp.json":              "lmstudio-crlf-tabs.json",
		".config/goose/config.yaml":       "goose-config.yaml",
	} {
		text, err := os.ReadFile(filepath.Join("ui", "connect", "testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(text)
	}
	for name, text := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// TestConnectCommand: connect --all writes and verifies all twelve clients
// (Claude Desktop's entry run as Claude Desktop runs it), a second run
// writes nothing, --status tells a revoked token, and disconnect undoes it.
func TestConnectCommand(t *testing.T) {
	home := fakeHome(t)
	srv := startServe(t, ollamatest.NewServer(t))
	data := []string{"--data", srv.dir}
	clients := len(connect.Clients())

	if out, _, err := deskhand(t, append(data, "connect", "--all", "--dry-run")...); err != nil || !strings.Contains(out, "would connect") || strings.Contains(out, "dh_") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if list, _, _ := deskhand(t, append(data, "token", "list")...); strings.Count(list, "\n") != 1 {
		t.Errorf("a dry run issued tokens:\n%s", list)
	}

	out, stderr, err := deskhand(t, append(data, "connect", "--all")...)
	if err != nil || strings.Count(out, "written, verified") != clients {
		t.Fatalf("connect --all: %v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(out, "Quit Claude Desktop completely") {
		t.Errorf("no restart hint for Claude Desktop:\n%s", out)
	}
	desktop, err := os.ReadFile(filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
	if err != nil || bytes.Contains(desktop, []byte("dh_")) || !bytes.Contains(desktop, []byte(`"weather"`)) {
		t.Errorf("Claude Desktop's file: %v\n%s", err, desktop)
	}

	// Claude Desktop's entry, started as Claude Desktop starts it, lists
	// the tools through the bridge.
	c := spawnEntry(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
	tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Errorf("tools/list through Claude Desktop's entry: %v", err)
	}
	c.Close()

	before := mtimes(t, home)
	if out, _, err := deskhand(t, append(data, "connect", "--all")...); err != nil || strings.Count(out, "connected, verified") != clients {
		t.Fatalf("second connect --all: %v\n%s", err, out)
	}
	if after := mtimes(t, home); after != before {
		t.Errorf("a second run touched files:\n%s\n%s", before, after)
	}

	if out, _, err := deskhand(t, append(data, "connect", "--status")...); err != nil || strings.Count(out, "connected, verified") != clients {
		t.Errorf("--status after connect --all: %v\n%s", err, out)
	}
	if _, _, err := deskhand(t, append(data, "token", "revoke", "claude-desktop")...); err != nil {
		t.Fatal(err)
	}
	out, _, err = deskhand(t, append(data, "connect", "--status")...)
	if err == nil || !regexp.MustCompile(`Claude Desktop\s+connected, token refused`).MatchString(out) || strings.Count(out, "connected, verified") != clients-1 {
		t.Errorf("status after a revoke: %v\n%s", err, out)
	}

	link, _, err := deskhand(t, append(data, "connect", "--link", "vscode")...)
	if err != nil || !strings.Contains(link, "vscode:mcp/install?") {
		t.Errorf("--link vscode: %v\n%s", err, link)
	}

	out, _, err = deskhand(t, append(data, "disconnect", "--all")...)
	if err != nil || strings.Count(out, "disconnected, token revoked") != clients {
		t.Errorf("disconnect --all: %v\n%s", err, out)
	}
	if list, _, _ := deskhand(t, append(data, "token", "list")...); strings.Count(list, "\n") != 1 {
		t.Errorf("tokens left after disconnect:\n%s", list)
	}
	srv.stop(t)
}

func TestConnectCommandErrors(t *testing.T) {
	fakeHome(t)
	data := []string{"--data", t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"connect"}, "name a client"},
		{[]string{"connect", "notepad"}, `unknown client "notepad"`},
		{[]string{"connect", "--all", "cursor"}, "either --all or client names"},
		{[]string{"connect", "--link", "codex"}, "has no install link"},
		{[]string{"connect", "--project", t.TempDir(), "windsurf"}, "no project configuration"},
	} {
		_, _, err := deskhand(t, append(data, tc.args...)...)
		if err == nil || !strings.Contains(agent.UserMessage(err), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// spawnEntry starts the "deskhand" stdio entry of a Claude Desktop config
// file the way Claude Desktop does, and initializes an MCP client on it.
func spawnEntry(t *testing.T, config string) *client.Client {
	t.Helper()
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, err := os.ReadFile(config)
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	e, ok := cfg.MCPServers["deskhand"]
	if err != nil || !ok || !filepath.IsAbs(e.Command) {
		t.Fatalf("entry in %s: %v %+v", config, err, cfg)
	}
	c, err := client.NewStdioMCPClient(e.Command, nil, e.Args...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20250618
	init.Params.ClientInfo = mcp.Implementation{Name: "claude-ai", Version: "0.1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %s %v: %v", e.Command, e.Args, err)
	}
	return c
}

// mtimes lists every file under dir with its modification time.
func mtimes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.ModTime().Format(time.RFC3339Nano) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDatabaseLockedByAnotherProcess: when another program holds the
// database's write lock past the busy timeout, the command says so and
// what to do, rather than failing with an internal error.
func TestDatabaseLockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := deskhand(t, "--data", dir, "token", "create", "first"); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	locker := exec.CommandContext(t.Context(), exe)
	locker.Env = append(os.Environ(), lockDBEnv+"="+filepath.Join(dir, store.FileName))
	stdin, _ := locker.StdinPipe()
	stdout, _ := locker.StdoutPipe()
	if err := locker.Start(); err != nil {
		t.Fatal(err)
	}
	defer locker.Wait()
	defer stdin.Close()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the locking process said %q", line)
	}
	_, _, err = deskhand(t, "--data", dir, "token", "create", "second")
	if msg := agent.UserMessage(err); err == nil || !strings.Contains(msg, "locked by another program") {
		t.Errorf("with the database locked: %v (%q)", err, msg)
	}
}

// TestConnectRefusesHostileFiles: megabytes of nested brackets in VS
// Code's mcp.json and Codex's config.toml (which overflowed the parsers'
// stacks and killed the process) are refused by connect and connect
// --status with a message that names the file, the limit and what to do;
// the files are left as they were and no token is issued.
func TestConnectRefusesHostileFiles(t *testing.T) {
	home := fakeHome(t)
	data := []string{"--data", t.TempDir()}
	hostile := map[string]string{
		".config/Code/User/mcp.json": strings.Repeat("[", 2<<20),
		".codex/config.toml":         "a = " + strings.Repeat("[", 2<<20),
	}
	for name, text := range hostile {
		if err := os.WriteFile(filepath.Join(home, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"connect", "vscode", "codex"}, {"connect", "--status", "vscode", "codex"}} {
		out, _, err := deskhand(t, append(data, args...)...)
		if err == nil || strings.Count(out, "refused: the file is nested too deeply, left untouched") != 2 {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
		for name := range hostile {
			p := filepath.Join(home, filepath.FromSlash(name))
			if !strings.Contains(out, p+" is nested more than") || !strings.Contains(out, "fix or move the file and run again") {
				t.Errorf("%v: no word on %s:\n%.2000s", args, p, out)
			}
		}
	}
	for name, text := range hostile {
		if got, err := os.ReadFile(filepath.Join(home, filepath.FromSlash(name))); err != nil || string(got) != text {
			t.Errorf("%s changed: %v", name, err)
		}
	}
	if list, _, _ := deskhand(t, append(data, "token", "list")...); strings.Count(list, "\n") != 1 {
		t.Errorf("tokens issued for refused files:\n%s", list)
	}
}

// TestConnectThroughLinks: in a project, a planted link that leads out of
// it is refused and nothing outside is written or chmodded; in user scope
// a link is followed, the real file written, the link kept, and the
// report names the real file.
func TestConnectThroughLinks(t *testing.T) {
	home := fakeHome(t)
	data := []string{"--data", t.TempDir()}
	root := t.TempDir()
	project, elsewhere := filepath.Join(root, "repo"), filepath.Join(root, "elsewhere", "settings.json")
	if err := os.MkdirAll(filepath.Join(project, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(elsewhere), 0o755); err != nil {
		t.Fatal(err)
	}
	const settings = `{"mcpServers": {}}`
	if err := os.WriteFile(elsewhere, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "elsewhere", "settings.json"), filepath.Join(project, ".cursor", "mcp.json")); err != nil {
		t.Skip(err)
	}
	out, _, err := deskhand(t, append(data, "connect", "--project", project, "cursor")...)
	if err == nil || !strings.Contains(out, "refused: a link out of the project, left untouched") || !strings.Contains(out, "outside the project folder") {
		t.Errorf("connect --project through a link out: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(elsewhere); err != nil || string(got) != settings {
		t.Errorf("the file outside the project was written: %q, %v", got, err)
	}
	if fi, err := os.Stat(elsewhere); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file outside the project was chmodded: %v, %v", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(elsewhere)); len(ents) != 1 {
		t.Errorf("files written outside the project: %v", ents)
	}
	if list, _, _ := deskhand(t, append(data, "token", "list")...); strings.Count(list, "\n") != 1 {
		t.Errorf("a token was issued:\n%s", list)
	}

	// User scope: ~/.cursor/mcp.json is a link into a dotfiles folder.
	link := filepath.Join(home, ".cursor", "mcp.json")
	real := filepath.Join(home, "dotfiles", "cursor.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	out, _, err = deskhand(t, append(data, "connect", "cursor")...)
	if resolved, _ := filepath.EvalSymlinks(real); err != nil || !strings.Contains(out, link+" -> "+resolved) {
		t.Errorf("connect through a user-scope link: %v\n%s", err, out)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if got, err := os.ReadFile(real); err != nil || !bytes.Contains(got, []byte(`"deskhand"`)) || !bytes.Contains(got, []byte(`"github"`)) {
		t.Errorf("the real file: %s, %v", got, err)
	}
}

// connectAtOnce starts n 'deskhand' processes (the test binary run as
// main) with args at once, waits for all, and returns each one's output
// and error.
func connectAtOnce(t *testing.T, n int, args ...string) (outs []string, errs []error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var bufs []*bytes.Buffer
	for range n {
		cmd := exec.CommandContext(t.Context(), exe, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, bufs = append(cmds, cmd), append(bufs, &out)
	}
	for i, cmd := range cmds {
		errs = append(errs, cmd.Wait())
		outs = append(outs, bufs[i].String())
	}
	return outs, errs
}

// checkOneEntry checks that each client's file holds our entry once,
// next to what it held before, and has keep backups that all parse.
func checkOneEntry(t *testing.T, home string, backups int) {
	t.Helper()
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	var cfg struct{ MCPServers map[string]json.RawMessage }
	if data, err := os.ReadFile(cursor); err != nil || json.Unmarshal(data, &cfg) != nil || len(cfg.MCPServers) != 2 || cfg.MCPServers["deskhand"] == nil {
		t.Errorf("Cursor's file: %v\n%s", err, data)
	}
	codex := filepath.Join(home, ".codex", "config.toml")
	if data, err := os.ReadFile(codex); err != nil || bytes.Count(data, []byte("[mcp_servers.deskhand]")) != 1 || !bytes.HasPrefix(data, []byte("# mine\n")) {
		t.Errorf("Codex's file: %v\n%s", err, data)
	}
	for _, p := range []string{cursor, codex} {
		list, _ := filepath.Glob(p + ".deskhand-backup-*")
		if len(list) != backups {
			t.Errorf("%d backups of %s, want %d: %v", len(list), p, backups, list)
		}
		for _, b := range list {
			if data, err := os.ReadFile(b); err != nil || len(data) == 0 {
				t.Errorf("backup %s: %v", b, err)
			}
		}
	}
}

// TestConcurrentConnects: several 'deskhand connect' processes at once
// for the same files queue for each file instead of failing. Without the
// app, every run ends with exit 0 (each run's core must find the client
// another run created after it started) and the token in each file is the
// one the app accepts once it starts; with the app, every run ends
// verified, each file holds one working entry, and the backups rotate.
func TestConcurrentConnects(t *testing.T) {
	home := fakeHome(t)
	dir := t.TempDir()
	const runs = 6
	// Where the app will serve, so that the entries written without it
	// point there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := []string{"--data", dir, "--addr", addr}
	// Each file existed before, and the last five backups are kept.
	atOnce := func(args []string, want string, backups int) {
		t.Helper()
		outs, errs := connectAtOnce(t, runs, append(data, args...)...)
		for i := range runs {
			if errs[i] != nil || strings.Count(outs[i], want) != 2 {
				t.Errorf("run %d of %v: %v\n%s", i, args, errs[i], outs[i])
			}
		}
		checkOneEntry(t, home, backups)
	}
	status := func(when string) {
		t.Helper()
		if out, _, err := deskhand(t, append(data, "connect", "--status", "cursor", "codex")...); err != nil || strings.Count(out, "connected, verified") != 2 {
			t.Errorf("status %s: %v\n%s", when, err, out)
		}
	}

	// Without the app: every run rotates and writes.
	atOnce([]string{"connect", "--rotate", "cursor", "codex"}, "written, not verified: Deskhand is not running", 5)
	srv := startServeAt(t, ollamatest.NewServer(t), dir, addr)
	status("once the app runs")

	// With the app, tokens revoked: the first run to get the file rotates,
	// writes and verifies; the others find its entry working.
	for _, name := range []string{"cursor", "codex"} {
		if _, _, err := deskhand(t, append(data, "token", "revoke", name)...); err != nil {
			t.Fatal(err)
		}
	}
	atOnce([]string{"connect", "cursor", "codex"}, ", verified (", 5)
	// With the app, every run rotates, writes and verifies.
	atOnce([]string{"connect", "--rotate", "cursor", "codex"}, "written, verified (", 5)
	status("after the runs")
	if list, _, _ := deskhand(t, append(data, "token", "list")...); strings.Count(list, "\n") != 3 {
		t.Errorf("tokens:\n%s", list)
	}
	srv.stop(t)
}
