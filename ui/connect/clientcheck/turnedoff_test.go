package clientcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/servertest"
)

// turnedOff turns the entries off the way each client does and checks
// that deskhand connect --status tells what the client's own command
// tells: Gemini CLI's `gemini mcp disable` list and folder trust, Qwen
// Code's approval of a project's servers, Codex's enabled switch,
// Claude Code's approval of a project's .mcp.json and its per-project
// switches. home holds the three clients, connected and verified.
func turnedOff(t *testing.T, s nodeSetup, bin, data, home, url string) {
	env := cleanEnv(home, s.path)
	claude := filepath.Join(s.bin, servertest.Exe("claude"))
	// status is deskhand connect --status's line for client.
	status := func(t *testing.T, env []string, dir, client string, args ...string) string {
		t.Helper()
		out, _ := run(t, env, dir, bin, append([]string{"connect", "--status", "--data", data}, args...)...)
		return lineOf(out, client+" ") + "\n" + out
	}
	// edit rewrites a file, and puts it back when the test ends.
	edit := func(t *testing.T, p string, change func([]byte) []byte) {
		t.Helper()
		before, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		writeFile(t, p, change(before))
		t.Cleanup(func() {
			if before == nil {
				os.Remove(p)
				return
			}
			writeFile(t, p, before)
		})
	}

	t.Run("gemini mcp disable", func(t *testing.T) {
		// `gemini mcp disable deskhand` refuses, in gemini 0.61, a server
		// from the user's settings ("not found"); this is the file it
		// writes for one it finds (McpServerEnablementManager).
		edit(t, filepath.Join(home, ".gemini", "mcp-server-enablement.json"), func([]byte) []byte {
			return []byte(`{"deskhand": {"enabled": false}}`)
		})
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("gemini")), "mcp", "list")
		if line := lineOf(out, "deskhand: "); err != nil || !strings.HasSuffix(line, " - Disabled") {
			t.Errorf("gemini mcp list says %q for deskhand (%v), want it Disabled\n%s", line, err, out)
		}
		if got := status(t, env, home, "Gemini CLI", "gemini"); !regexp.MustCompile(`^Gemini CLI\s+connected, disabled by the client`).MatchString(got) || !strings.Contains(got, "gemini mcp enable deskhand") {
			t.Errorf("deskhand connect --status: %s", got)
		}
	})

	t.Run("codex enabled = false", func(t *testing.T) {
		edit(t, filepath.Join(home, ".codex", "config.toml"), func(b []byte) []byte {
			return []byte(strings.Replace(string(b), "[mcp_servers.deskhand]\n", "[mcp_servers.deskhand]\nenabled = false\n", 1))
		})
		out, err := run(t, env, home, filepath.Join(s.bin, servertest.Exe("codex")), "mcp", "get", "deskhand")
		// A disabled server is shown by name alone: "deskhand (disabled)".
		if err != nil || !hasLine(out, "deskhand (disabled)") {
			t.Errorf("codex mcp get deskhand (%v) does not say \"deskhand (disabled)\"\n%s", err, out)
		}
		if got := status(t, env, home, "Codex", "codex"); !regexp.MustCompile(`^Codex\s+connected, disabled by the client`).MatchString(got) {
			t.Errorf("deskhand connect --status: %s", got)
		}
	})

	t.Run("gemini project folder trust", func(t *testing.T) {
		// A home of its own: no user-level entry of the same name.
		home := t.TempDir()
		env := cleanEnv(home, s.path)
		writeFile(t, filepath.Join(home, ".gemini", "settings.json"), []byte("{}\n"))
		project := filepath.Join(home, "repo")
		if err := os.Mkdir(project, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, env, project, bin, "connect", "gemini", "--project", project, "--data", data)
		if err != nil || !regexp.MustCompile(`Gemini CLI\s+written, verified, awaits your approval in the client`).MatchString(out) {
			t.Fatalf("deskhand connect --project: %v\n%s", err, out)
		}
		trust := func(level string) {
			writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+project+`": "`+level+`"}`))
		}
		for _, tc := range []struct{ trust, gemini, deskhand string }{
			// Gemini CLI shows a folder it was never told to trust as
			// Disabled; deskhand says what to do about it.
			{"", "Disabled", "connected, verified, awaits your approval"},
			{"TRUST_FOLDER", "Connected", `connected, verified \(`},
			{"DO_NOT_TRUST", "Disabled", "connected, disabled by the client"},
		} {
			if tc.trust != "" {
				trust(tc.trust)
			}
			out, err := run(t, env, project, filepath.Join(s.bin, servertest.Exe("gemini")), "mcp", "list")
			if line := lineOf(out, "deskhand: "); err != nil || !strings.HasSuffix(line, "deskhand: "+url+" (http) - "+tc.gemini) {
				t.Errorf("trust %q: gemini mcp list says %q for deskhand (%v), want %s\n%s", tc.trust, line, err, tc.gemini, out)
			}
			if got := status(t, env, project, "Gemini CLI", "gemini", "--project", project); !regexp.MustCompile(`^Gemini CLI\s+` + tc.deskhand).MatchString(got) {
				t.Errorf("trust %q: deskhand connect --status: %s", tc.trust, got)
			}
		}
	})

	t.Run("qwen project approval", func(t *testing.T) {
		// A home of its own: no user-level entry of the same name.
		home := t.TempDir()
		env := cleanEnv(home, s.path)
		writeFile(t, filepath.Join(home, ".qwen", "settings.json"), []byte("{}\n"))
		project := filepath.Join(home, "repo")
		if err := os.Mkdir(project, 0o755); err != nil {
			t.Fatal(err)
		}
		qwen := filepath.Join(s.bin, servertest.Exe("qwen"))
		connect := func(args ...string) {
			t.Helper()
			out, err := run(t, env, project, bin, append([]string{"connect", "qwen", "--project", project, "--data", data}, args...)...)
			if err != nil || !regexp.MustCompile(`Qwen Code\s+written, verified, awaits your approval in the client`).MatchString(out) {
				t.Fatalf("deskhand connect qwen --project %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		check := func(step, qwenSays, deskhandSays string) {
			t.Helper()
			out, err := run(t, env, project, qwen, "mcp", "list")
			if line := lineOf(out, "deskhand: "); err != nil || !strings.HasSuffix(line, "deskhand: "+url+" (http) - "+qwenSays) {
				t.Errorf("%s: qwen mcp list says %q for deskhand (%v), want %s\n%s", step, line, err, qwenSays, out)
			}
			if got := status(t, env, project, "Qwen Code", "qwen", "--project", project); !regexp.MustCompile(`^Qwen Code\s+` + deskhandSays).MatchString(got) {
				t.Errorf("%s: deskhand connect --status: %s", step, got)
			}
		}
		connect()
		check("written", "Pending approval", "connected, verified, awaits your approval")
		// Qwen Code's own approval, bound to the entry's hash.
		if out, err := run(t, env, project, qwen, "mcp", "approve", "deskhand"); err != nil || !strings.Contains(out, `Approved MCP server "deskhand"`) {
			t.Fatalf("qwen mcp approve deskhand: %v\n%s", err, out)
		}
		check("approved", "Connected", `connected, verified \(`)
		// A new token is a new entry: Qwen Code wants a new approval.
		connect("--rotate")
		check("rotated", "Pending approval", "connected, verified, awaits your approval")
		if out, err := run(t, env, project, qwen, "mcp", "reject", "deskhand"); err != nil || !strings.Contains(out, `Rejected MCP server "deskhand"`) {
			t.Fatalf("qwen mcp reject deskhand: %v\n%s", err, out)
		}
		check("rejected", "Rejected", "connected, disabled by the client")
	})

	t.Run("claude /mcp disable in one project", func(t *testing.T) {
		project := filepath.Join(home, "off")
		if err := os.Mkdir(project, 0o755); err != nil {
			t.Fatal(err)
		}
		edit(t, filepath.Join(home, ".claude.json"), func(b []byte) []byte {
			return setProject(t, b, project, map[string]any{"disabledMcpServers": []string{"deskhand"}})
		})
		out, err := run(t, env, project, claude, "mcp", "list")
		if line := lineOf(out, "deskhand: "); err != nil || !strings.Contains(line, "Disabled for this project") {
			t.Errorf("claude mcp list in %s says %q for deskhand (%v)\n%s", project, line, err, out)
		}
		// Elsewhere it works, and deskhand says where it is off.
		if got := status(t, env, home, "Claude Code", "claude-code"); !regexp.MustCompile(`^Claude Code\s+connected, verified`).MatchString(got) || !strings.Contains(got, "turned off in "+project) {
			t.Errorf("deskhand connect --status: %s", got)
		}
	})

	t.Run("claude project .mcp.json", func(t *testing.T) {
		// A home of its own: no user-level entry of the same name.
		home := t.TempDir()
		env := cleanEnv(home, s.path)
		writeFile(t, filepath.Join(home, ".claude.json"), []byte("{}\n"))
		project := filepath.Join(home, "repo")
		if err := os.Mkdir(project, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, env, project, bin, "connect", "claude-code", "--project", project, "--data", data)
		if err != nil || !regexp.MustCompile(`Claude Code\s+written, verified, awaits your approval in the client`).MatchString(out) {
			t.Fatalf("deskhand connect --project: %v\n%s", err, out)
		}
		claudeSays := func(want string) {
			t.Helper()
			out, err := run(t, env, project, claude, "mcp", "list")
			if line := lineOf(out, "deskhand: "); err != nil || !strings.HasPrefix(line, "deskhand: "+url) || !strings.Contains(line, want) {
				t.Errorf("claude mcp list says %q for deskhand (%v), want %q\n%s", line, err, want, out)
			}
		}
		claudeSays("Pending approval")
		if got := status(t, env, project, "Claude Code", "claude-code", "--project", project); !regexp.MustCompile(`^Claude Code\s+connected, verified, awaits your approval`).MatchString(got) {
			t.Errorf("deskhand connect --status: %s", got)
		}
		// What approving it in Claude Code records.
		global := filepath.Join(home, ".claude.json")
		writeFile(t, global, setProject(t, []byte("{}"), project, map[string]any{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"deskhand"}}))
		claudeSays("Connected")
		if got := status(t, env, project, "Claude Code", "claude-code", "--project", project); !regexp.MustCompile(`^Claude Code\s+connected, verified \(`).MatchString(got) {
			t.Errorf("deskhand connect --status once approved: %s", got)
		}
		// Turned off for the project: Claude Code lists it no more.
		writeFile(t, global, setProject(t, []byte("{}"), project, map[string]any{"hasTrustDialogAccepted": true, "disabledMcpjsonServers": []string{"deskhand"}}))
		if out, err := run(t, env, project, claude, "mcp", "list"); err != nil || lineOf(out, "deskhand: ") != "" {
			t.Errorf("claude mcp list still lists deskhand (%v)\n%s", err, out)
		}
		if got := status(t, env, project, "Claude Code", "claude-code", "--project", project); !regexp.MustCompile(`^Claude Code\s+connected, disabled by the client`).MatchString(got) {
			t.Errorf("deskhand connect --status once turned off: %s", got)
		}
	})
}

// setProject sets ~/.claude.json's entry of one project folder.
func setProject(t *testing.T, data []byte, dir string, entry map[string]any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	projects, _ := doc["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[dir] = entry
	doc["projects"] = projects
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
