package cli

import (
	"archive/zip"
	"debug/pe"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/ui/connect"
)

// tinyWindowsProgram is the smallest file debug/pe reads as a Windows
// program: a DOS header pointing at a PE header with no sections.
func tinyWindowsProgram() []byte {
	b := make([]byte, 0x80+4+20)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
	copy(b[0x80:], "PE\x00\x00")
	binary.LittleEndian.PutUint16(b[0x84:], pe.IMAGE_FILE_MACHINE_AMD64)
	binary.LittleEndian.PutUint16(b[0x84+18:], pe.IMAGE_FILE_EXECUTABLE_IMAGE)
	return b
}

// bundleManifest reads the manifest of the extension at path.
func bundleManifest(t *testing.T, path string) (args []string, platforms []string, entries []string) {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var m struct {
		Server struct {
			MCPConfig struct {
				Args []string `json:"args"`
			} `json:"mcp_config"`
		} `json:"server"`
		Compatibility struct {
			Platforms []string `json:"platforms"`
		} `json:"compatibility"`
	}
	for _, f := range z.File {
		entries = append(entries, f.Name)
		if f.Name != "manifest.json" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(r).Decode(&m)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return m.Server.MCPConfig.Args, m.Compatibility.Platforms, entries
}

// TestConnectExtension: 'connect claude-desktop --extension FILE' writes
// the bundle of this program or of --extension-program, with --data when
// the data folder is not the default one, and runs nothing else (no app,
// no database, no config file).
func TestConnectExtension(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	win := filepath.Join(dir, "deskhand.exe")
	if err := os.WriteFile(win, tinyWindowsProgram(), 0o755); err != nil {
		t.Fatal(err)
	}
	host := map[string]string{"windows": connect.PlatformWindows, "darwin": connect.PlatformMac, "linux": connect.PlatformLinux}[runtime.GOOS]
	if host == "" {
		t.Skipf("no Claude Desktop extension for %s", runtime.GOOS)
	}
	for _, c := range []struct {
		name      string
		args      []string // after "connect claude-desktop --extension OUT"
		platform  string
		entry     string
		wantArgs  []string
		wantWords string // in stdout
	}{
		{"this program", nil, host, "server/deskhand", connect.StdioArgs, "a Claude Desktop extension for"},
		{"a Windows program, another data folder", []string{"--extension-program", win, "--data", "/d/other"}, connect.PlatformWindows, "server/deskhand.exe",
			[]string{"stdio", "--client", "claude-desktop", "--data", "/d/other"}, "Open it with Claude Desktop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, rec := fakeEnv(t, nil)
			env.Executable = func() (string, error) { return self, nil }
			env.ExtensionIcon = []byte("\x89PNG\r\n\x1a\n")
			out := filepath.Join(t.TempDir(), "Deskhand.mcpb")
			status, stdout, stderr := runLine(t, env, append([]string{"connect", "claude-desktop", "--extension", out}, c.args...)...)
			if status != 0 || !strings.Contains(stdout, c.wantWords) || len(rec.ran) > 0 {
				t.Fatalf("status %d, ran %v\nstdout:\n%s\nstderr:\n%s", status, rec.ran, stdout, stderr)
			}
			if host == connect.PlatformWindows && c.entry == "server/deskhand" {
				c.entry += ".exe"
			}
			args, platforms, entries := bundleManifest(t, out)
			if !slices.Equal(args, c.wantArgs) || !slices.Equal(platforms, []string{c.platform}) || !slices.Contains(entries, c.entry) || !slices.Contains(entries, "icon.png") {
				t.Errorf("args %q, platforms %q, entries %q; want %q, [%s], %s and icon.png", args, platforms, entries, c.wantArgs, c.platform, c.entry)
			}
		})
	}
}

// TestConnectExtensionRefused: --extension with another client or another
// connect flag is a usage error; a program that is no deskhand for
// Windows, macOS or Linux is refused; either way nothing is written and
// nothing runs.
func TestConnectExtensionRefused(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args       []string // OUT is the file to write
		wantStatus int
		want       string // in stderr
	}{
		{[]string{"connect", "cursor", "--extension", "OUT"}, 2, "--extension is for Claude Desktop alone"},
		{[]string{"connect", "--extension", "OUT"}, 2, "--extension is for Claude Desktop alone"},
		{[]string{"connect", "claude-desktop", "cursor", "--extension", "OUT"}, 2, "--extension is for Claude Desktop alone"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT", "--rotate"}, 2, "it takes no --rotate"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT", "--dry-run"}, 2, "it takes no --dry-run"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT", "--project", dir}, 2, "it takes no --project"},
		{[]string{"connect", "--all", "--extension", "OUT"}, 2, "--extension is for Claude Desktop alone"},
		{[]string{"connect", "claude-desktop", "--status", "--extension", "OUT"}, 2, "it takes no --status"},
		{[]string{"connect", "claude-desktop", "--extension-program", script}, 2, "--extension-program needs --extension FILE"},
		{[]string{"connect", "claude-desktop", "--extension", ""}, 2, "--extension-program needs --extension FILE"},
		{[]string{"disconnect", "claude-desktop", "--extension", "OUT"}, 2, "takes no flag --extension"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT", "--extension-program", script}, 1, "is not a program Claude Desktop can run\ncause: not a program for Windows, macOS or Linux"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT", "--extension-program", filepath.Join(dir, "missing")}, 1, "cannot read the program"},
		{[]string{"connect", "claude-desktop", "--extension", "OUT"}, 1, "cannot read the program /usr/bin/deskhand"}, // fakeEnv's Executable
		{[]string{"connect", "claude-desktop", "--extension", filepath.Join(dir, "Deskhand.zip"), "--extension-program", script}, 1, "does not end in .mcpb"},
	} {
		env, rec := fakeEnv(t, nil)
		out := filepath.Join(t.TempDir(), "Deskhand.mcpb")
		args := slices.Clone(c.args)
		for i, a := range args {
			if a == "OUT" {
				args[i] = out
			}
		}
		status, stdout, stderr := runLine(t, env, args...)
		if status != c.wantStatus || !strings.Contains(stderr, c.want) || stdout != "" || len(rec.ran) > 0 {
			t.Errorf("%q: status %d, ran %v; want %d and %q in stderr:\n%s", c.args, status, rec.ran, c.wantStatus, c.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q wrote %s", c.args, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind in %s: %v", dir, ents)
	}
}
