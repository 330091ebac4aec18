package clientcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/servertest"
)

// TestClaudeDesktopExtension writes the Claude Desktop extension of the
// built deskhand (deskhand connect claude-desktop --extension), checks its
// manifest with the format's own validator (mcpb validate), then installs
// and starts it as Claude Desktop does (testdata/mcpb-launch.mjs:
// @anthropic-ai/mcpb's unpackExtension and getMcpConfigForManifest, the MCP
// SDK's stdio client) against a deskhand serve in a fake HOME. The tools it
// lists must be that app's agents, reached as the client claude-desktop:
// a wrong command fails to start, and wrong arguments (another data folder,
// another client) reach another Deskhand or another token.
func TestClaudeDesktopExtension(t *testing.T) {
	s := setupNode(t)
	mcpb := filepath.Join(s.bin, servertest.Exe("mcpb"))
	if _, err := os.Stat(mcpb); err != nil {
		t.Fatalf("npm ci did not install mcpb: %v", err)
	}
	bin := buildDeskhand(t, t.TempDir())
	home := t.TempDir()
	// Short, for the control socket (see TestClientsTheirOwnCommands).
	data, err := os.MkdirTemp("", "dhx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	env := cleanEnv(home, s.path)
	serve(t, bin, data, env)

	// An agent only this Deskhand has.
	if out, err := run(t, env, home, bin, "agent", "add", "probe", "--name", "Probe", "--prompt", "Answer briefly.", "--data", data); err != nil {
		t.Fatalf("deskhand agent add: %v\n%s", err, out)
	}
	bundle := filepath.Join(t.TempDir(), "Deskhand.mcpb")
	out, err := run(t, env, home, bin, "connect", "claude-desktop", "--extension", bundle, "--data", data)
	if err != nil {
		t.Fatalf("deskhand connect claude-desktop --extension: %v\n%s", err, out)
	}
	t.Logf("deskhand connect claude-desktop --extension:\n%s", out)
	// It wrote the bundle alone: no config file, no token yet.
	if ents, err := os.ReadDir(home); err != nil || len(ents) != 0 {
		t.Errorf("the fake HOME holds %v (%v), want nothing", ents, err)
	}

	t.Run("mcpb validate", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "unpacked")
		if out, err := run(t, env, home, mcpb, "unpack", bundle, dir); err != nil {
			t.Fatalf("mcpb unpack: %v\n%s", err, out)
		}
		out, err := run(t, env, home, mcpb, "validate", filepath.Join(dir, "manifest.json"))
		t.Logf("mcpb validate:\n%s", out)
		if err != nil || !strings.Contains(out, "Manifest schema validation passes!") {
			t.Fatalf("mcpb validate: %v\n%s", err, out)
		}
		if fi, err := os.Stat(filepath.Join(dir, "server", "deskhand")); err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("the unpacked program: %v, %v; want it executable", fi.Mode(), err)
		}
	})

	t.Run("started as Claude Desktop starts it", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "Claude Extensions", "deskhand")
		out, err := run(t, env, home, s.node, filepath.Join(s.dir, "mcpb-launch.mjs"), bundle, dir)
		t.Logf("mcpb-launch.mjs:\n%s", out)
		if err != nil {
			t.Fatalf("mcpb-launch.mjs: %v", err)
		}
		var got struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Tools   []string `json:"tools"`
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
			t.Fatalf("mcpb-launch.mjs printed no result: %v", err)
		}
		if want := dir + "/server/deskhand"; got.Command != want {
			t.Errorf("Claude Desktop would run %q, want %q", got.Command, want)
		}
		if want := []string{"stdio", "--client", "claude-desktop", "--data", data}; !slices.Equal(got.Args, want) {
			t.Errorf("Claude Desktop would pass %q, want %q", got.Args, want)
		}
		if !slices.Contains(got.Tools, "probe") {
			t.Errorf("tools %q, want the served app's agent probe among them", got.Tools)
		}
		// The app saw the calls as claude-desktop, with the token the
		// bridge put in the keychain (here its fallback file).
		out, err = run(t, env, home, bin, "token", "list", "--data", data)
		if err != nil {
			t.Fatalf("deskhand token list: %v\n%s", err, out)
		}
		t.Logf("deskhand token list:\n%s", out)
		if line := lineOf(out, "claude-desktop "); line == "" || regexp.MustCompile(`\snever\s`).MatchString(line+" ") {
			t.Errorf("deskhand token list says %q for claude-desktop, want a token used just now", line)
		}
	})
}
