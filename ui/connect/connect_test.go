package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"gopkg.in/yaml.v3"
)

const (
	testURL   = "http://127.0.0.1:47111/mcp"
	testToken = "tok-123"
	testCmd   = "/opt/deskhand/bin/deskhand"
)

func testEnv(t *testing.T) Env {
	t.Helper()
	home := t.TempDir()
	clock := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	return Env{
		OS:     "linux",
		Home:   home,
		Getenv: func(string) string { return "" },
		Now: func() time.Time {
			clock = clock.Add(time.Second)
			return clock
		},
	}
}

func serversKey(c Client) string {
	switch c.ID {
	case VSCode.ID:
		return "servers"
	case Codex.ID:
		return "mcp_servers"
	case OpenCode.ID:
		return "mcp"
	case Zed.ID:
		return "context_servers"
	case Goose.ID:
		return "extensions"
	}
	return "mcpServers"
}

func decode(t *testing.T, c Client, data []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if c.ID == Codex.ID {
		if err := toml.Unmarshal(data, &m); err != nil {
			t.Fatalf("result is not valid TOML: %v\n%s", err, data)
		}
		return m
	}
	if c.ID == Goose.ID {
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatalf("result is not valid YAML: %v\n%s", err, data)
		}
		return m
	}
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err != nil {
		t.Fatalf("result is not valid JSONC: %v\n%s", err, data)
	}
	if jf, ok := mustFormat(t, c).(jsonFormat); ok && !jf.jsonc && !bytes.Equal(std, data) {
		t.Fatalf("result is not plain JSON:\n%s", data)
	}
	if err := json.Unmarshal(std, &m); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, data)
	}
	return m
}

func mustFormat(t *testing.T, c Client) format {
	t.Helper()
	f, err := formatOf(c)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func wantEntry(c Client) map[string]any {
	auth := map[string]any{"Authorization": "Bearer " + testToken}
	switch c.ID {
	case Cursor.ID:
		return map[string]any{"url": testURL, "headers": auth}
	case ClaudeCode.ID, VSCode.ID:
		return map[string]any{"type": "http", "url": testURL, "headers": auth}
	case Windsurf.ID:
		return map[string]any{"serverUrl": testURL, "headers": auth}
	case Codex.ID:
		return map[string]any{"url": testURL, "http_headers": auth, "tool_timeout_sec": int64(660)}
	case ClaudeDesktop.ID:
		return map[string]any{"command": testCmd, "args": []any{"stdio", "--client", "claude-desktop"}}
	case Gemini.ID, Qwen.ID:
		// A minute more than Deskhand's 10-minute question timeout, in ms.
		return map[string]any{"httpUrl": testURL, "headers": auth, "timeout": float64(660000)}
	case OpenCode.ID:
		return map[string]any{"type": "remote", "url": testURL, "headers": auth, "enabled": true, "oauth": false}
	case Zed.ID:
		return map[string]any{"url": testURL, "headers": auth, "timeout": float64(660)}
	case LMStudio.ID:
		return map[string]any{"url": testURL, "headers": auth}
	case Goose.ID:
		return map[string]any{"enabled": true, "type": "streamable_http", "name": "deskhand", "description": "Deskhand's agents",
			"uri": testURL, "headers": auth, "envs": map[string]any{}, "env_keys": []any{}, "timeout": 660, "available_tools": []any{}}
	}
	return nil
}

// rest is the document without our entry (and without a servers table
// left empty by removing it).
func rest(c Client, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	if c.ID == Goose.ID && m[serversKey(c)] == nil {
		delete(out, serversKey(c)) // "extensions:" (null) reads as none
	}
	if s, ok := m[serversKey(c)].(map[string]any); ok {
		s2 := map[string]any{}
		for k, v := range s {
			if k != DefaultName {
				s2[k] = v
			}
		}
		if len(s2) == 0 {
			delete(out, serversKey(c))
		} else {
			out[serversKey(c)] = s2
		}
	}
	return out
}

func entryFor(c Client) Entry {
	if c.ID == ClaudeDesktop.ID {
		return Entry{Command: testCmd}
	}
	return Entry{URL: testURL, Token: testToken}
}

// Fixtures: files like real users' (other servers, comments, unusual key
// order, Windows line endings, a stale entry of ours).
var (
	cursorFixture       = fixture("cursor-stale-entry.json")
	claudeCodeFixture   = fixture("claude-code-crlf.json")
	claudeCodeNoServers = fixture("claude-code-no-servers.json")
	vscodeFixture       = fixture("vscode-jsonc.json")
	vscodeNoEntry       = fixture("vscode-crlf-tabs.json")
	windsurfFixture     = fixture("windsurf-minified.json")
	codexFixture        = fixture("codex-stale-table.toml")
	codexNoEntryCRLF    = fixture("codex-crlf.toml")
	codexDotted         = fixture("codex-dotted.toml")
	desktopFixture      = fixture("claude-desktop.json")
	geminiFixture       = fixture("gemini-settings.json")
	qwenFixture         = fixture("qwen-crlf.json")
	openCodeFixture     = fixture("opencode.jsonc")
	zedFixture          = fixture("zed-settings.json")
	lmStudioFixture     = fixture("lmstudio-crlf-tabs.json")
	gooseFixture        = fixture("goose-config.yaml")
	gooseCRLF           = fixture("goose-crlf-4space.yaml")
	gooseEmpty          = fixture("goose-empty-extensions.yaml")
)

func fixture(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestConnectFixtures(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		file   *string // nil: no file and no folder
	}{
		{"cursor stale entry 4-space", Cursor, ptr(cursorFixture)},
		{"cursor missing folder", Cursor, nil},
		{"claude-code CRLF other keys", ClaudeCode, ptr(claudeCodeFixture)},
		{"claude-code no mcpServers", ClaudeCode, ptr(claudeCodeNoServers)},
		{"claude-code missing file", ClaudeCode, nil},
		{"vscode JSONC comments trailing commas", VSCode, ptr(vscodeFixture)},
		{"vscode CRLF tabs no entry", VSCode, ptr(vscodeNoEntry)},
		{"vscode empty file", VSCode, ptr("")},
		{"vscode missing folder", VSCode, nil},
		{"windsurf minified", Windsurf, ptr(windsurfFixture)},
		{"windsurf missing folder", Windsurf, nil},
		{"codex stale table with subtable", Codex, ptr(codexFixture)},
		{"codex CRLF no entry", Codex, ptr(codexNoEntryCRLF)},
		{"codex dotted entry", Codex, ptr(codexDotted)},
		{"codex missing folder", Codex, nil},
		{"claude-desktop other servers", ClaudeDesktop, ptr(desktopFixture)},
		{"claude-desktop missing folder", ClaudeDesktop, nil},
		{"gemini comments stale entry", Gemini, ptr(geminiFixture)},
		{"gemini missing folder", Gemini, nil},
		{"qwen CRLF no entry", Qwen, ptr(qwenFixture)},
		{"qwen empty file", Qwen, ptr("")},
		{"qwen missing folder", Qwen, nil},
		{"opencode JSONC trailing commas", OpenCode, ptr(openCodeFixture)},
		{"opencode no mcp", OpenCode, ptr(`{"$schema": "https://opencode.ai/config.json", "theme": "opencode"}`)},
		{"opencode missing folder", OpenCode, nil},
		{"zed comments stale stdio entry", Zed, ptr(zedFixture)},
		{"zed missing folder", Zed, nil},
		{"lmstudio CRLF tabs no entry", LMStudio, ptr(lmStudioFixture)},
		{"lmstudio missing folder", LMStudio, nil},
		{"goose stale sse entry comments", Goose, ptr(gooseFixture)},
		{"goose CRLF 4-space no entry", Goose, ptr(gooseCRLF)},
		{"goose empty extensions", Goose, ptr(gooseEmpty)},
		{"goose no extensions", Goose, ptr("# mine KEEP-1\nGOOSE_PROVIDER: ollama\n")},
		{"goose empty file", Goose, ptr("")},
		{"goose missing folder", Goose, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			c := tc.client
			p, err := Path(c, env)
			if err != nil {
				t.Fatal(err)
			}
			var before []byte
			if tc.file != nil {
				before = []byte(*tc.file)
				writeFile(t, p, before, 0o644)
			}
			if got := Installed(c, env); got != (tc.file != nil) {
				t.Errorf("Installed = %v, want %v", got, tc.file != nil)
			}
			hadEntry, hadServers := false, false
			if len(before) > 0 {
				var servers map[string]any
				servers, hadServers = decode(t, c, before)[serversKey(c)].(map[string]any)
				_, hadEntry = servers[DefaultName]
			}

			res, err := Connect(c, env, entryFor(c))
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if !res.Changed || res.Path != p || res.Created != (tc.file == nil) {
				t.Errorf("Connect result = %+v", res)
			}
			after := readFile(t, p)
			m := decode(t, c, after)
			got := m[serversKey(c)].(map[string]any)[DefaultName]
			if !reflect.DeepEqual(got, wantEntry(c)) {
				t.Errorf("entry = %#v, want %#v\n%s", got, wantEntry(c), after)
			}
			if len(before) > 0 {
				if !reflect.DeepEqual(rest(c, m), rest(c, decode(t, c, before))) {
					t.Errorf("the rest of the file changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			}
			checkKept(t, before, after)
			checkBackup(t, p, res.Backup, before, tc.file != nil)
			wantMode := os.FileMode(0o600)
			if c.ID == ClaudeDesktop.ID && tc.file != nil {
				wantMode = 0o644 // no token: the existing mode is kept
			}
			if mode := fileMode(t, p); mode != wantMode {
				t.Errorf("mode = %v, want %v", mode, wantMode)
			}
			if c.ID == ClaudeDesktop.ID && bytes.Contains(after, []byte(testToken)) {
				t.Error("Claude Desktop config holds a token")
			}

			// A second Connect writes nothing.
			old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			res, err = Connect(c, env, entryFor(c))
			if err != nil || res.Changed || res.Backup != "" {
				t.Fatalf("second Connect = %+v, %v", res, err)
			}
			if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) || !bytes.Equal(readFile(t, p), after) {
				t.Error("second Connect rewrote the file")
			}

			st, err := Status(c, env, "")
			if err != nil || st.Condition != Connected || st.Path != p {
				t.Fatalf("Status = %+v, %v", st, err)
			}
			if c.ID == ClaudeDesktop.ID {
				if st.Command != testCmd || st.HasToken {
					t.Errorf("Status = %+v", st)
				}
			} else if st.URL != testURL || !st.HasToken {
				t.Errorf("Status = %+v", st)
			}

			res, err = Disconnect(c, env, "")
			if err != nil || !res.Changed || res.Backup == "" {
				t.Fatalf("Disconnect = %+v, %v", res, err)
			}
			gone := readFile(t, p)
			m = decode(t, c, gone)
			if servers, _ := m[serversKey(c)].(map[string]any); servers[DefaultName] != nil {
				t.Errorf("entry still present after Disconnect:\n%s", gone)
			}
			if len(before) > 0 {
				if !reflect.DeepEqual(rest(c, m), rest(c, decode(t, c, before))) {
					t.Errorf("Disconnect changed the rest:\nbefore:\n%s\nafter:\n%s", before, gone)
				}
				if hadServers && !hadEntry && !bytes.Equal(gone, before) {
					t.Errorf("Connect+Disconnect is not byte-identical:\nbefore:\n%q\nafter:\n%q", before, gone)
				}
			}
			checkKept(t, before, gone)
			if st, err := Status(c, env, ""); err != nil || st.Condition != NotConnected {
				t.Errorf("Status after Disconnect = %+v, %v", st, err)
			}
			if res, err := Disconnect(c, env, ""); err != nil || res.Changed {
				t.Errorf("second Disconnect = %+v, %v", res, err)
			}
		})
	}
}

func TestInvalidFileRefused(t *testing.T) {
	tests := []struct {
		client Client
		body   string
	}{
		{Cursor, fixture("invalid/cursor-unclosed.json")},
		{ClaudeCode, fixture("invalid/claude-code-comments.json")},
		{VSCode, fixture("invalid/vscode-missing-value.json")},
		{Windsurf, fixture("invalid/windsurf-array.json")},
		{Windsurf, fixture("invalid/windsurf-servers-array.json")},
		{Codex, fixture("invalid/codex-unclosed-header.toml")},
		{Codex, fixture("invalid/codex-servers-number.toml")},
		{ClaudeDesktop, fixture("invalid/claude-desktop-trailing.json")},
		{Gemini, fixture("invalid/gemini-unclosed.json")},
		{Qwen, fixture("invalid/qwen-missing-comma.json")},
		{OpenCode, fixture("invalid/opencode-mcp-array.json")},
		{Zed, fixture("invalid/zed-missing-value.json")},
		{LMStudio, fixture("invalid/lmstudio-trailing.json")},
		{Goose, fixture("invalid/goose-unclosed.yaml")},
		{Goose, fixture("invalid/goose-extensions-list.yaml")},
		{Goose, fixture("invalid/goose-duplicate-key.yaml")},
	}
	for _, tc := range tests {
		t.Run(tc.client.ID, func(t *testing.T) {
			env := testEnv(t)
			p, _ := Path(tc.client, env)
			writeFile(t, p, []byte(tc.body), 0o644)
			_, err := Connect(tc.client, env, entryFor(tc.client))
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != p || !strings.Contains(err.Error(), p) {
				t.Fatalf("Connect error = %v, want a ParseError for %s", err, p)
			}
			if _, err := Disconnect(tc.client, env, ""); !errors.As(err, &pe) {
				t.Errorf("Disconnect error = %v", err)
			}
			if _, err := Status(tc.client, env, ""); !errors.As(err, &pe) {
				t.Errorf("Status error = %v", err)
			}
			if got := readFile(t, p); string(got) != tc.body {
				t.Errorf("file changed: %q", got)
			}
			if b := backups(p); len(b) != 0 {
				t.Errorf("backups written: %v", b)
			}
			if entries := besides(t, p); len(entries) != 0 {
				t.Errorf("stray files: %v", entries)
			}
		})
	}
}

func TestBackupsKeepLastFive(t *testing.T) {
	env := testEnv(t)
	p, _ := Path(Cursor, env)
	writeFile(t, p, []byte(cursorFixture), 0o644)
	var last []byte
	for i := range 8 {
		last = readFile(t, p)
		e := entryFor(Cursor)
		e.Token = strings.Repeat("t", i+1)
		if _, err := Connect(Cursor, env, e); err != nil {
			t.Fatal(err)
		}
	}
	b := backups(p)
	if len(b) != keepBackups {
		t.Fatalf("backups = %v, want %d", b, keepBackups)
	}
	if got := readFile(t, b[len(b)-1]); !bytes.Equal(got, last) {
		t.Errorf("newest backup = %s, want %s", got, last)
	}
	if mode := fileMode(t, b[0]); mode != 0o600 {
		t.Errorf("backup mode = %v", mode)
	}
}

func TestSymlinkKept(t *testing.T) {
	env := testEnv(t)
	p, _ := Path(Cursor, env)
	real := filepath.Join(env.Home, "dotfiles", "mcp.json")
	writeFile(t, real, []byte(cursorFixture), 0o600)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Skip(err)
	}
	if _, err := Connect(Cursor, env, entryFor(Cursor)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if !bytes.Contains(readFile(t, real), []byte(testToken)) {
		t.Error("target not updated")
	}
}

func TestPath(t *testing.T) {
	home := t.TempDir()
	msix := t.TempDir()
	if err := os.MkdirAll(filepath.Join(msix, "Packages", "Claude_pzs8sxrjxfjjc"), 0o700); err != nil {
		t.Fatal(err)
	}
	getenv := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		client Client
		env    Env
		want   string
	}{
		{Cursor, Env{OS: "windows", Home: home}, filepath.Join(home, ".cursor", "mcp.json")},
		{ClaudeCode, Env{OS: "darwin", Home: home}, filepath.Join(home, ".claude.json")},
		{VSCode, Env{OS: "linux", Home: home}, filepath.Join(home, ".config", "Code", "User", "mcp.json")},
		{VSCode, Env{OS: "linux", Home: home, Getenv: getenv(map[string]string{"XDG_CONFIG_HOME": "/xdg"})}, filepath.Join("/xdg", "Code", "User", "mcp.json")},
		{VSCode, Env{OS: "darwin", Home: home}, filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")},
		{VSCode, Env{OS: "windows", Home: home, AppData: "/appdata"}, filepath.Join("/appdata", "Code", "User", "mcp.json")},
		{Windsurf, Env{OS: "linux", Home: home}, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")},
		{Codex, Env{OS: "linux", Home: home}, filepath.Join(home, ".codex", "config.toml")},
		{Codex, Env{OS: "linux", Home: home, Getenv: getenv(map[string]string{"CODEX_HOME": "/ch"})}, filepath.Join("/ch", "config.toml")},
		{ClaudeDesktop, Env{OS: "darwin", Home: home}, filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")},
		{ClaudeDesktop, Env{OS: "linux", Home: home}, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")},
		{ClaudeDesktop, Env{OS: "windows", Home: home}, filepath.Join(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")},
		{Cursor, Env{Home: home, Project: "/p"}, filepath.Join("/p", ".cursor", "mcp.json")},
		{ClaudeCode, Env{Home: home, Project: "/p"}, filepath.Join("/p", ".mcp.json")},
		{VSCode, Env{OS: "darwin", Home: home, Project: "/p"}, filepath.Join("/p", ".vscode", "mcp.json")},
		{Gemini, Env{OS: "windows", Home: home}, filepath.Join(home, ".gemini", "settings.json")},
		{Gemini, Env{OS: "linux", Home: home, Getenv: getenv(map[string]string{"GEMINI_CLI_HOME": "/g"})}, filepath.Join("/g", ".gemini", "settings.json")},
		{Gemini, Env{Home: home, Project: "/p"}, filepath.Join("/p", ".gemini", "settings.json")},
		{Qwen, Env{OS: "darwin", Home: home}, filepath.Join(home, ".qwen", "settings.json")},
		{Qwen, Env{Home: home, Project: "/p"}, filepath.Join("/p", ".qwen", "settings.json")},
		{OpenCode, Env{OS: "darwin", Home: home}, filepath.Join(home, ".config", "opencode", "opencode.json")},
		{OpenCode, Env{OS: "windows", Home: home}, filepath.Join(home, ".config", "opencode", "opencode.json")},
		{OpenCode, Env{OS: "linux", Home: home, Getenv: getenv(map[string]string{"XDG_CONFIG_HOME": "/xdg"})}, filepath.Join("/xdg", "opencode", "opencode.json")},
		{OpenCode, Env{Home: home, Project: "/p"}, filepath.Join("/p", "opencode.json")},
		{Zed, Env{OS: "linux", Home: home}, filepath.Join(home, ".config", "zed", "settings.json")},
		{Zed, Env{OS: "darwin", Home: home}, filepath.Join(home, ".config", "zed", "settings.json")},
		{Zed, Env{OS: "windows", Home: home, AppData: "/appdata"}, filepath.Join("/appdata", "Zed", "settings.json")},
		{Zed, Env{Home: home, Project: "/p"}, filepath.Join("/p", ".zed", "settings.json")},
		{LMStudio, Env{OS: "windows", Home: home}, filepath.Join(home, ".lmstudio", "mcp.json")},
		{LMStudio, Env{OS: "darwin", Home: home}, filepath.Join(home, ".lmstudio", "mcp.json")},
		{Goose, Env{OS: "linux", Home: home}, filepath.Join(home, ".config", "goose", "config.yaml")},
		{Goose, Env{OS: "darwin", Home: home}, filepath.Join(home, ".config", "goose", "config.yaml")},
		{Goose, Env{OS: "windows", Home: home, AppData: "/appdata"}, filepath.Join("/appdata", "Block", "goose", "config", "config.yaml")},
		{ClaudeDesktop, Env{OS: "windows", Home: home, AppData: "/appdata", LocalAppData: msix},
			filepath.Join(msix, "Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude", "claude_desktop_config.json")},
	}
	for _, tc := range tests {
		got, err := Path(tc.client, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("Path(%s, %s) = %q, %v; want %q", tc.client.ID, tc.env.OS, got, err, tc.want)
		}
	}
	if !Installed(ClaudeDesktop, Env{OS: "windows", Home: home, LocalAppData: msix}) {
		t.Error("MSIX Claude Desktop not detected as installed")
	}
	for _, c := range []Client{Windsurf, Codex, ClaudeDesktop, LMStudio, Goose} {
		if _, err := Path(c, Env{Home: home, Project: "/p"}); !errors.Is(err, ErrNoProjectScope) {
			t.Errorf("Path(%s) in a project: %v", c.ID, err)
		}
	}
	if _, err := Path(Client{ID: "nope"}, Env{Home: home}); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("unknown client: %v", err)
	}
	if len(Clients()) != 12 {
		t.Errorf("Clients() = %v", Clients())
	}
	for _, c := range Clients() {
		if got, ok := Lookup(c.ID); !ok || got != c {
			t.Errorf("Lookup(%q) = %v, %v", c.ID, got, ok)
		}
	}
}

func TestBadEntries(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		client Client
		entry  Entry
	}{
		{ClaudeDesktop, Entry{Command: "deskhand"}},
		{Cursor, Entry{URL: "127.0.0.1:1/mcp"}},
		{Codex, Entry{URL: testURL, Name: "desk.hand"}},
		{VSCode, Entry{URL: testURL, Token: "a\nb"}},
	}
	for _, tc := range tests {
		if _, err := Connect(tc.client, env, tc.entry); err == nil {
			t.Errorf("Connect(%s, %+v) succeeded", tc.client.ID, tc.entry)
		}
		p, _ := Path(tc.client, env)
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written for a bad entry", p)
		}
	}
	if st, err := Status(Cursor, env, ""); err != nil || st.Condition != NotInstalled {
		t.Errorf("Status = %+v, %v", st, err)
	}
}

// TestOpenCodeJSONC: opencode's file is opencode.jsonc when only that one
// exists (in the user folder and in a project), else opencode.json.
func TestOpenCodeJSONC(t *testing.T) {
	for _, project := range []bool{false, true} {
		env := testEnv(t)
		dir := filepath.Join(env.Home, ".config", "opencode")
		if project {
			env.Project = t.TempDir()
			dir = env.Project
		}
		if p, _ := Path(OpenCode, env); p != filepath.Join(dir, "opencode.json") {
			t.Errorf("no file: Path = %s", p)
		}
		jsonc := filepath.Join(dir, "opencode.jsonc")
		writeFile(t, jsonc, []byte(openCodeFixture), 0o644)
		if p, _ := Path(OpenCode, env); p != jsonc {
			t.Errorf("only .jsonc: Path = %s", p)
		}
		if _, err := Connect(OpenCode, env, entryFor(OpenCode)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(readFile(t, jsonc), []byte(testToken)) || exists(filepath.Join(dir, "opencode.json")) {
			t.Error("the entry did not go to opencode.jsonc")
		}
		writeFile(t, filepath.Join(dir, "opencode.json"), []byte("{}"), 0o644)
		if p, _ := Path(OpenCode, env); p != filepath.Join(dir, "opencode.json") {
			t.Errorf("both: Path = %s", p)
		}
	}
}

func TestConnectWithoutTokenKeepsMode(t *testing.T) {
	env := testEnv(t)
	p, _ := Path(Codex, env)
	writeFile(t, p, []byte(codexNoEntryCRLF), 0o640)
	if _, err := Connect(Codex, env, Entry{URL: testURL}); err != nil {
		t.Fatal(err)
	}
	if mode := fileMode(t, p); mode != 0o640 {
		t.Errorf("mode = %v, want 0640", mode)
	}
	got := decode(t, Codex, readFile(t, p))["mcp_servers"].(map[string]any)[DefaultName]
	if !reflect.DeepEqual(got, map[string]any{"url": testURL, "tool_timeout_sec": int64(660)}) {
		t.Errorf("entry = %v", got)
	}
}

// checkKept checks that every line marked KEEP in before is still in after.
func checkKept(t *testing.T, before, after []byte) {
	t.Helper()
	for _, l := range strings.Split(string(before), "\n") {
		if strings.Contains(l, "KEEP") && !bytes.Contains(after, []byte(strings.TrimSpace(l))) {
			t.Errorf("lost line %q:\n%s", l, after)
		}
	}
	if bytes.Contains(before, []byte("\r\n")) && bytes.Count(after, []byte("\n")) != bytes.Count(after, []byte("\r\n")) {
		t.Errorf("CRLF line endings not kept: %q", after)
	}
}

func checkBackup(t *testing.T, p, backup string, before []byte, existed bool) {
	t.Helper()
	if !existed {
		if backup != "" || len(backups(p)) != 0 {
			t.Errorf("backup of a new file: %q", backup)
		}
		return
	}
	if !strings.HasPrefix(backup, p+".deskhand-backup-") {
		t.Fatalf("backup = %q", backup)
	}
	if got := readFile(t, backup); !bytes.Equal(got, before) {
		t.Errorf("backup content = %q, want %q", got, before)
	}
}

func ptr(s string) *string { return &s }

func writeFile(t *testing.T, p string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileMode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestGooseRefusesWhatItCannotEditByLine: a config.yaml whose extensions
// are not an indented block (Goose never writes one) is refused with a
// clear error and left as it was.
func TestGooseRefusesWhatItCannotEditByLine(t *testing.T) {
	for _, body := range []string{
		"{GOOSE_PROVIDER: ollama}\n",
		"extensions: {memory: {enabled: true, type: builtin, name: memory}}\n",
		"extensions: {deskhand: {enabled: true, type: sse, uri: 'http://x/sse'}}\n",
	} {
		env := testEnv(t)
		p, _ := Path(Goose, env)
		writeFile(t, p, []byte(body), 0o644)
		_, errC := Connect(Goose, env, entryFor(Goose))
		_, errD := Disconnect(Goose, env, "")
		if !errors.Is(errC, errUnsafeEdit) || !strings.Contains(errC.Error(), "edit it by hand") {
			t.Errorf("%q: Connect error = %v", body, errC)
		}
		if strings.Contains(body, "deskhand") && !errors.Is(errD, errUnsafeEdit) {
			t.Errorf("%q: Disconnect error = %v", body, errD)
		}
		if got := readFile(t, p); string(got) != body || len(backups(p)) != 0 {
			t.Errorf("%q: file changed to %q or backed up", body, got)
		}
	}
}

// TestGooseLastExtensionRemoved: removing the only extension leaves
// "extensions: {}" (Goose refuses a null), the key line's comment kept.
func TestGooseLastExtensionRemoved(t *testing.T) {
	for body, want := range map[string]string{
		"extensions: # extensions: mine\n  deskhand:\n    uri: x\nGOOSE_MODE: auto\n": "extensions: {} # extensions: mine\nGOOSE_MODE: auto\n",
		"extensions:\r\n  deskhand:\r\n    uri: x\r\n":                                "extensions: {}\r\n",
		"!t extensions:  \n  deskhand:":                                               "!t extensions: {}  \n",
	} {
		out, found, err := yamlFormat{}.remove("f", []byte(body), DefaultName)
		if err != nil || !found || string(out) != want {
			t.Errorf("remove(%q) = %q, %v, %v; want %q", body, out, found, err, want)
		}
	}
}
