package clientcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/servertest"
)

const (
	startTimeout  = 30 * time.Second
	stopTimeout   = 10 * time.Second
	clientTimeout = 90 * time.Second
)

// TestClientsTheirOwnCommands connects Claude Code, Codex, Gemini CLI and Qwen Code
// with deskhand connect in a fake HOME and asks each client, with its own
// command, whether the entry works.
func TestClientsTheirOwnCommands(t *testing.T) {
	s := setupNode(t)
	for _, name := range []string{"claude", "codex", "gemini", "qwen"} {
		if _, err := os.Stat(filepath.Join(s.bin, servertest.Exe(name))); err != nil {
			t.Fatalf("npm ci did not install %s: %v", name, err)
		}
	}
	bin := buildDeskhand(t, t.TempDir())

	home := t.TempDir()
	for _, dir := range []string{".codex", ".gemini", ".qwen"} {
		if err := os.Mkdir(filepath.Join(home, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Claude Code's file exists once it has run; connect looks for it.
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Gemini CLI connects no MCP server, not even a user-level one, in a
	// folder that is not trusted; a user trusts it from the CLI's prompt,
	// which records it here. The clients run in this folder.
	trusted, err := json.Marshal(map[string]string{home: "TRUST_FOLDER"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: the control socket lives in the data folder, and a
	// Unix socket path must stay short (104 bytes on macOS).
	data, err := os.MkdirTemp("", "dhc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })

	env := cleanEnv(home, s.path)
	url := serve(t, bin, data, env)

	out, err := run(t, env, home, bin, "connect", "claude-code", "codex", "gemini", "qwen", "--data", data)
	if err != nil {
		t.Fatalf("deskhand connect: %v\n%s", err, out)
	}
	t.Logf("deskhand connect:\n%s", out)

	t.Run("claude mcp list", func(t *testing.T) {
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("claude")), "mcp", "list")
		if err != nil {
			t.Fatalf("claude mcp list: %v\n%s", err, out)
		}
		t.Logf("claude mcp list:\n%s", out)
		// "deskhand: URL (HTTP) - ✔ Connected"; the glyph differs between
		// versions, so only the words are checked.
		line := lineOf(out, "deskhand: ")
		if !strings.HasPrefix(line, "deskhand: "+url+" (HTTP) - ") || !strings.HasSuffix(line, " Connected") {
			t.Errorf("claude mcp list says %q for deskhand, want \"deskhand: %s (HTTP) - ✔ Connected\"", line, url)
		}
	})
	t.Run("codex mcp get deskhand", func(t *testing.T) {
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("codex")), "mcp", "get", "deskhand")
		if err != nil {
			t.Fatalf("codex mcp get deskhand: %v\n%s", err, out)
		}
		t.Logf("codex mcp get deskhand:\n%s", out)
		for _, want := range []string{"enabled: true", "transport: streamable_http", "url: " + url, "http_headers: Authorization="} {
			if !hasLine(out, want) {
				t.Errorf("codex mcp get deskhand has no line %q", want)
			}
		}
	})
	t.Run("gemini mcp list", func(t *testing.T) {
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("gemini")), "mcp", "list")
		if err != nil {
			t.Fatalf("gemini mcp list: %v\n%s", err, out)
		}
		t.Logf("gemini mcp list:\n%s", out)
		line := lineOf(out, "deskhand: ")
		if want := "deskhand: " + url + " (http) - Connected"; !strings.HasSuffix(line, want) {
			t.Errorf("gemini mcp list says %q for deskhand, want \"✓ %s\"", line, want)
		}
	})
	t.Run("qwen mcp list", func(t *testing.T) {
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("qwen")), "mcp", "list")
		if err != nil {
			t.Fatalf("qwen mcp list: %v\n%s", err, out)
		}
		t.Logf("qwen mcp list:\n%s", out)
		line := lineOf(out, "deskhand: ")
		if want := "deskhand: " + url + " (http) - Connected"; !strings.HasSuffix(line, want) {
			t.Errorf("qwen mcp list says %q for deskhand, want \"✓ %s\"", line, want)
		}
	})
	t.Run("deskhand connect --status", func(t *testing.T) {
		out, err := run(t, env, home, bin, "connect", "--status", "claude-code", "codex", "gemini", "qwen", "--data", data)
		if err != nil {
			t.Fatalf("deskhand connect --status: %v\n%s", err, out)
		}
		for _, client := range []string{"Claude Code", "Codex", "Gemini CLI", "Qwen Code"} {
			if line := lineOf(out, client+" "); !regexp.MustCompile(`^` + client + `\s+connected, verified`).MatchString(line) {
				t.Errorf("deskhand connect --status says %q for %s, want \"connected, verified\"\n%s", line, client, out)
			}
		}
	})
	turnedOff(t, s, bin, data, home, url)
}

// cleanEnv is the environment of deskhand and the clients: HOME is the fake
// one, PATH starts with Node 22, CI is true, no keychain, and nothing that
// would point a client at another configuration or give it a key.
func cleanEnv(home, path string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "USERPROFILE", k == "PATH", k == "CI", k == "DBUS_SESSION_BUS_ADDRESS",
			strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "DESKHAND_"),
			strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE_"),
			strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "CODEX_"),
			strings.HasPrefix(k, "GEMINI_"), strings.HasPrefix(k, "GOOGLE_"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "USERPROFILE="+home, "PATH="+path, "CI=true",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent", "NO_COLOR=1", "FORCE_COLOR=0",
		// No update checks or telemetry from a test run.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	if _, set := os.LookupEnv("GORACE"); raceEnabled && !set {
		env = append(env, "GORACE=atexit_sleep_ms=0") // a -race binary otherwise sleeps a second at exit
	}
	return env
}

// serve starts "deskhand serve" on a free loopback port, waits for its
// banner and returns the MCP URL; at cleanup it is stopped with SIGINT and
// its process group killed.
func serve(t *testing.T, bin, data string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	cmd.Env = env
	out := &servertest.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		defer killGroup(cmd)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Errorf("deskhand serve: SIGINT: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("deskhand serve did not exit cleanly after SIGINT: %v\n%s", err, out.String())
			}
		case <-time.After(stopTimeout):
			killGroup(cmd)
			<-done
			t.Errorf("deskhand serve did not exit within %s of SIGINT; killed\n%s", stopTimeout, out.String())
		}
		if t.Failed() {
			t.Logf("deskhand serve output:\n%s", out.String())
		}
	})
	return out.WaitFor(t, regexp.MustCompile(`serving your agents at (\S+)`), startTimeout)[1]
}

// run runs a command in dir with env and clientTimeout, returning its
// stdout and stderr together; its process group is killed when it ends.
func run(t *testing.T, env []string, dir, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = nil // no terminal: the clients must not wait for input
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	killGroup(cmd) // helpers the command left behind
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s (%v)", clientTimeout, err)
	}
	t.Logf("%s %s: %s", filepath.Base(bin), strings.Join(args, " "), time.Since(start).Round(10*time.Millisecond))
	return out.String(), err
}

// colour is a terminal colour sequence: Qwen Code writes them even with
// NO_COLOR and no terminal.
var colour = regexp.MustCompile("\x1b\\[[0-9;]*m")

// lineOf is the first line of out that has prefix after its leading
// glyphs, colours and spaces, trimmed; "" when there is none.
func lineOf(out, prefix string) string {
	for _, line := range strings.Split(colour.ReplaceAllString(out, ""), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, prefix); i >= 0 && !strings.ContainsAny(line[:i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") {
			return line
		}
	}
	return ""
}

// hasLine says whether out has a line that is want once trimmed, or starts
// with it when want ends with "=".
func hasLine(out, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == want || strings.HasSuffix(want, "=") && strings.HasPrefix(line, want) {
			return true
		}
	}
	return false
}
