package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolServerImport: 'toolserver import' registers the servers a
// client's file holds, its secret to the keychain (the fallback file
// here) and not the database, leaves Deskhand's own entries (by name and
// by address) and a server whose value the client fills in, and a second
// run registers nothing again. --dry-run registers nothing.
func TestToolServerImport(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(home, "no-bus"))
	const secret = "sk-live-4f9a2c7e1b"
	cursor := `{"mcpServers": {
		"notes": {"command": "npx", "args": ["-y", "notes-server"], "env": {"NOTES_API_KEY": "` + secret + `", "LEVEL": "info"}},
		"deskhand": {"url": "http://127.0.0.1:7345/mcp", "headers": {"Authorization": "Bearer dh_abc"}},
		"mine": {"url": "http://localhost:7345/mcp"},
		"gh": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}}
	}}`
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(cursor), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := deskhandIn(t, "", append([]string{"--data", dir, "--addr", "127.0.0.1:7345"}, args...)...)
		if err != nil {
			t.Fatalf("deskhand %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out + errOut
	}

	dry := run("toolserver", "import", "--dry-run", "cursor")
	if !strings.Contains(dry, "would be imported") || strings.Contains(run("toolserver", "list"), "notes") {
		t.Fatalf("dry run:\n%s", dry)
	}
	out := run("toolserver", "import", "cursor")
	for _, want := range []string{"notes", "imported (1 secret(s) to the keychain)", "gh", "left: the client fills in", "GITHUB_TOKEN"} {
		if !strings.Contains(out, want) {
			t.Errorf("import says no %q:\n%s", want, out)
		}
	}
	for _, own := range []string{"deskhand ", "mine "} {
		if strings.Contains(out, "\n"+own) {
			t.Errorf("import lists Deskhand's own entry %q:\n%s", own, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("import printed the secret:\n%s", out)
	}
	list := run("toolserver", "list")
	if !strings.Contains(list, "notes") || strings.Contains(list, "gh ") {
		t.Errorf("list after import:\n%s", list)
	}
	if strings.Contains(dataBytes(t, dir), secret) {
		t.Error("the secret reached the database or the logs")
	}
	secrets, err := os.ReadFile(filepath.Join(dir, "secrets.json"))
	if err != nil || !strings.Contains(string(secrets), secret) {
		t.Errorf("the secret is not in the keychain's fallback file: %v", err)
	}
	if again := run("toolserver", "import", "cursor"); !strings.Contains(again, "registered already") {
		t.Errorf("a second import:\n%s", again)
	}
}

// TestToolServerImportRefusesAddFlags: import takes no server
// definition, and --dry-run belongs to import.
func TestToolServerImportRefusesAddFlags(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"toolserver", "import", "--command", "npx"},
		{"toolserver", "list", "--dry-run"},
	} {
		if _, _, err := deskhandIn(t, "", append([]string{"--data", dir}, args...)...); err == nil {
			t.Errorf("deskhand %v was accepted", args)
		}
	}
}
