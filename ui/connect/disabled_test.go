package connect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// TestDisabledByTheClient: an entry the client turned off, by its own
// switch or by the client's list of excluded or allowed servers, is
// "disabled by the client" with the reason, not verified; turned back on,
// it verifies again.
func TestDisabledByTheClient(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	realFiles(t, env)
	m, _ := newManager(t, r, env)
	// jsonEdit sets a value in a JSON (with comments) file.
	jsonEdit := func(set func(doc map[string]any)) func([]byte) []byte {
		return func(data []byte) []byte {
			std, err := hujson.Standardize(bytes.Clone(data))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(std, &doc); err != nil {
				t.Fatal(err)
			}
			set(doc)
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	entry := func(doc map[string]any, keys ...string) map[string]any {
		return field(doc, keys...).(map[string]any)
	}
	for _, tc := range []struct {
		client  Client
		disable func([]byte) []byte
		reason  string
	}{
		{OpenCode, jsonEdit(func(doc map[string]any) { entry(doc, "mcp", "deskhand")["enabled"] = false }), `"enabled": false`},
		{Zed, jsonEdit(func(doc map[string]any) { entry(doc, "context_servers", "deskhand")["enabled"] = false }), `"enabled": false`},
		{Gemini, jsonEdit(func(doc map[string]any) { doc["mcp"] = map[string]any{"excluded": []any{"desk*"}} }), "exclude it (mcp.excluded)"},
		{Qwen, jsonEdit(func(doc map[string]any) { doc["allowMCPServers"] = []any{"github"} }), "allow only other servers (allowMCPServers)"},
		{Codex, func(data []byte) []byte {
			return bytes.Replace(data, []byte("[mcp_servers.deskhand]"), []byte("[mcp_servers.deskhand]\nenabled = false"), 1)
		}, "enabled = false"},
		{Goose, func(data []byte) []byte {
			i := bytes.Index(data, []byte("  deskhand:"))
			j := bytes.Index(data[i:], []byte("enabled: true"))
			return append(append(bytes.Clone(data[:i+j]), "enabled: false"...), data[i+j+len("enabled: true"):]...)
		}, "enabled: false"},
	} {
		t.Run(tc.client.ID, func(t *testing.T) {
			ctx := t.Context()
			if rep, err := m.Connect(ctx, tc.client, ConnectOptions{}); err != nil || rep.Check.Health != Verified {
				t.Fatalf("Connect = %+v, %v", rep.Check, err)
			}
			p, _ := Path(tc.client, env)
			on := readFile(t, p)
			writeFile(t, p, tc.disable(on), 0o600)
			rep, err := m.Status(ctx, tc.client)
			if err != nil || rep.Check.Health != Disabled || !strings.Contains(rep.Check.Detail, tc.reason) {
				t.Errorf("Status of the turned-off entry = %v (%s), %v; want disabled by the client, saying %q", rep.Check.Health, rep.Check.Detail, err, tc.reason)
			}
			writeFile(t, p, on, 0o600)
			if rep, err := m.Status(ctx, tc.client); err != nil || rep.Check.Health != Verified {
				t.Errorf("Status once on again = %+v, %v", rep.Check, err)
			}
		})
	}
}

// TestTurnedOffOutsideItsFile: the switches a client keeps in files of
// its own (Gemini CLI's `gemini mcp disable`; Claude Code's approval and
// per-project lists) are read as the clients read them (checked against
// gemini 0.61 and claude 2.1.332), and connecting again leaves such an
// entry alone.
func TestTurnedOffOutsideItsFile(t *testing.T) {
	r := startDeskhand(t)
	ctx := t.Context()
	status := func(t *testing.T, m *Manager, c Client, want Health, detail string) Report {
		t.Helper()
		rep, err := m.Status(ctx, c)
		if err != nil || rep.Check.Health != want || !strings.Contains(rep.Check.Detail, detail) {
			t.Fatalf("Status = %v (%s), %v; want %v saying %q", rep.Check.Health, rep.Check.Detail, err, want, detail)
		}
		return rep
	}
	// connectAgain checks that Connect keeps the entry byte for byte.
	connectAgain := func(t *testing.T, m *Manager, c Client, want Health) {
		t.Helper()
		p, _ := Path(c, m.Env)
		before := readFile(t, p)
		rep, err := m.Connect(ctx, c, ConnectOptions{})
		if err != nil || rep.Action == Wrote || rep.Check.Health != want || !bytes.Equal(readFile(t, p), before) {
			t.Fatalf("Connect again = %v, %v, %v: want the entry left alone", rep.Action, rep.Check.Health, err)
		}
	}

	t.Run("gemini mcp disable", func(t *testing.T) {
		env := testEnv(t)
		realFiles(t, env)
		m, _ := newManager(t, r, env)
		if rep, err := m.Connect(ctx, Gemini, ConnectOptions{}); err != nil || rep.Check.Health != Verified {
			t.Fatalf("Connect = %+v, %v", rep.Check, err)
		}
		enablement := filepath.Join(env.Home, ".gemini", "mcp-server-enablement.json")
		writeFile(t, enablement, []byte(`{"github": {"enabled": false}, "deskhand": {"enabled": false}}`), 0o644)
		status(t, m, Gemini, Disabled, "gemini mcp enable deskhand")
		connectAgain(t, m, Gemini, Disabled)
		writeFile(t, enablement, []byte(`{"github": {"enabled": false}}`), 0o644)
		status(t, m, Gemini, Verified, "")
	})

	t.Run("claude /mcp disable in a project", func(t *testing.T) {
		env := testEnv(t)
		realFiles(t, env)
		m, _ := newManager(t, r, env)
		if _, err := m.Connect(ctx, ClaudeCode, ConnectOptions{}); err != nil {
			t.Fatal(err)
		}
		p, _ := Path(ClaudeCode, env)
		data := readFile(t, p)
		doc := parseDoc(data)
		doc["projects"] = map[string]any{
			"/home/me/b": map[string]any{"disabledMcpServers": []any{"deskhand"}},
			"/home/me/a": map[string]any{"disabledMcpServers": []any{"deskhand", "github"}},
			"/home/me/c": map[string]any{"disabledMcpServers": []any{"desk*"}}, // no globs in Claude Code
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, out, 0o600)
		rep := status(t, m, ClaudeCode, Verified, "")
		if want := "turned off in /home/me/a, /home/me/b: /mcp enable deskhand there"; !strings.Contains(rep.Hint, want) {
			t.Errorf("hint %q, want it to say %q", rep.Hint, want)
		}
	})

	t.Run("claude project approval", func(t *testing.T) {
		env := testEnv(t)
		realFiles(t, env)
		parent := t.TempDir()
		env.Project = filepath.Join(parent, "repo")
		if err := os.Mkdir(env.Project, 0o755); err != nil {
			t.Fatal(err)
		}
		m, _ := newManager(t, r, env)
		rep, err := m.Connect(ctx, ClaudeCode, ConnectOptions{})
		if err != nil || rep.Check.Health != AwaitsApproval || rep.Check.Tools == 0 || !strings.Contains(rep.Check.Detail, "start claude in "+env.Project) {
			t.Fatalf("Connect = %+v, %v; want it verified and awaiting approval", rep.Check, err)
		}
		connectAgain(t, m, ClaudeCode, AwaitsApproval)

		global := filepath.Join(env.Home, ".claude.json")
		original := readFile(t, global)
		setGlobal := func(projects map[string]any) {
			doc := parseDoc(original)
			doc["projects"] = projects
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, global, out, 0o600)
		}
		local := filepath.Join(env.Project, ".claude", "settings.local.json")
		userSettings := filepath.Join(env.Home, ".claude", "settings.json")
		// The project's own settings count only in a folder the person trusted.
		writeFile(t, local, []byte(`{"enabledMcpjsonServers": ["deskhand"]}`), 0o644)
		status(t, m, ClaudeCode, AwaitsApproval, "approve")
		setGlobal(map[string]any{parent: map[string]any{"hasTrustDialogAccepted": true}})
		status(t, m, ClaudeCode, Verified, "")
		if err := os.Remove(local); err != nil {
			t.Fatal(err)
		}
		status(t, m, ClaudeCode, AwaitsApproval, "approve")

		setGlobal(map[string]any{env.Project: map[string]any{"enabledMcpjsonServers": []any{"deskhand"}}})
		status(t, m, ClaudeCode, Verified, "")
		setGlobal(nil)
		writeFile(t, userSettings, []byte(`{"enableAllProjectMcpServers": true}`), 0o644)
		status(t, m, ClaudeCode, Verified, "")
		setGlobal(map[string]any{env.Project: map[string]any{"disabledMcpjsonServers": []any{"deskhand"}}})
		status(t, m, ClaudeCode, Disabled, "disabledMcpjsonServers in "+global)
		connectAgain(t, m, ClaudeCode, Disabled)
	})
}

// TestQwenConfigHash: the hash Qwen Code 0.24.4 recorded in
// mcpApprovals.json when `qwen mcp approve deskhand` approved this entry.
func TestQwenConfigHash(t *testing.T) {
	entry := parseDoc([]byte(`{"httpUrl": "http://127.0.0.1:9/mcp", "timeout": 660000, "headers": {"Authorization": "Bearer x"}, "description": "not hashed"}`))
	if got, want := qwenConfigHash(entry), "d2eec3262ee9fdcad434015fe0ad1024e7e8312bc856fb4ce9e1d002dc5b0728"; got != want {
		t.Errorf("qwenConfigHash = %s, want %s", got, want)
	}
}

// TestQwenProjectApproval: Qwen Code runs a project's server only once
// approved, bound to the entry's hash; a new token waits for approval
// again, and a rejection turns it off.
func TestQwenProjectApproval(t *testing.T) {
	r := startDeskhand(t)
	ctx := t.Context()
	env := testEnv(t)
	env.Project = t.TempDir()
	m, _ := newManager(t, r, env)
	rep, err := m.Connect(ctx, Qwen, ConnectOptions{})
	if err != nil || rep.Check.Health != AwaitsApproval || !strings.Contains(rep.Check.Detail, "qwen mcp approve deskhand") {
		t.Fatalf("Connect = %+v, %v; want it awaiting approval", rep.Check, err)
	}
	record := func(status string) {
		p, _ := Path(Qwen, env)
		entry := field(parseDoc(readFile(t, p)), "mcpServers", "deskhand").(map[string]any)
		out, err := json.Marshal(map[string]any{env.Project: map[string]any{"deskhand": map[string]any{"hash": qwenConfigHash(entry), "status": status}}})
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(env.Home, ".qwen", "mcpApprovals.json"), out, 0o600)
	}
	status := func(want Health, detail string) {
		t.Helper()
		rep, err := m.Status(ctx, Qwen)
		if err != nil || rep.Check.Health != want || !strings.Contains(rep.Check.Detail, detail) {
			t.Errorf("Status = %v (%s), %v; want %v saying %q", rep.Check.Health, rep.Check.Detail, err, want, detail)
		}
	}
	record("approved")
	status(Verified, "")
	record("rejected")
	status(Disabled, "qwen mcp reject")
	record("approved")
	if rep, err := m.Connect(ctx, Qwen, ConnectOptions{Rotate: true}); err != nil || rep.Check.Health != AwaitsApproval {
		t.Fatalf("Connect --rotate = %+v, %v", rep.Check, err)
	}
	status(AwaitsApproval, "changed since you approved it")
}

// TestGeminiFolderTrust: Gemini CLI reads a project's settings only in a
// folder the person trusted; the longest rule of trustedFolders.json that
// holds the folder decides, as in Gemini CLI 0.61.
func TestGeminiFolderTrust(t *testing.T) {
	r := startDeskhand(t)
	ctx := t.Context()
	env := testEnv(t)
	parent := t.TempDir()
	env.Project = filepath.Join(parent, "repo")
	if err := os.Mkdir(env.Project, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, r, env)
	if _, err := m.Connect(ctx, Gemini, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(env.Home, ".gemini", "trustedFolders.json")
	for _, tc := range []struct {
		name     string
		rules    map[string]string
		settings string // ~/.gemini/settings.json
		env      map[string]string
		want     Health
	}{
		{"no rule: Gemini asks", nil, "", nil, AwaitsApproval},
		{"the folder trusted", map[string]string{env.Project: "TRUST_FOLDER"}, "", nil, Verified},
		{"its parent trusted", map[string]string{parent: "TRUST_FOLDER"}, "", nil, Verified},
		{"TRUST_PARENT of a sibling", map[string]string{filepath.Join(parent, "other"): "TRUST_PARENT"}, "", nil, Verified},
		{"TRUST_PARENT of the folder itself trusts its parent", map[string]string{env.Project: "TRUST_PARENT"}, "", nil, Verified},
		{"a folder beside it", map[string]string{env.Project + "2": "TRUST_FOLDER"}, "", nil, AwaitsApproval},
		{"distrusted inside a trusted parent", map[string]string{parent: "TRUST_FOLDER", env.Project: "DO_NOT_TRUST"}, "", nil, Disabled},
		{"trusted inside a distrusted parent", map[string]string{parent: "DO_NOT_TRUST", env.Project: "TRUST_FOLDER"}, "", nil, Verified},
		{"folder trust off", nil, `{"security": {"folderTrust": {"enabled": false}}}`, nil, Verified},
		{"trusted by the environment", nil, "", map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}, Verified},
		{"restricted mode", map[string]string{env.Project: "TRUST_FOLDER"}, "", map[string]string{"GEMINI_RESTRICTED_MODE": "true"}, Disabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := json.Marshal(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, rules, out, 0o600)
			writeFile(t, filepath.Join(env.Home, ".gemini", "settings.json"), []byte(cmp.Or(tc.settings, "{}")), 0o600)
			m.Env.Getenv = func(k string) string { return tc.env[k] }
			if rep, err := m.Status(ctx, Gemini); err != nil || rep.Check.Health != tc.want {
				t.Errorf("Status = %v (%s), %v; want %v", rep.Check.Health, rep.Check.Detail, err, tc.want)
			}
		})
	}
}
