package connect

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importFixtures are the fixtures of testdata/import, by client.
var importFixtures = map[string]string{
	Cursor.ID:        "cursor.json",
	ClaudeCode.ID:    "claude-code.json",
	VSCode.ID:        "vscode.json",
	Windsurf.ID:      "windsurf.json",
	Codex.ID:         "codex.toml",
	ClaudeDesktop.ID: "claude-desktop.json",
	Gemini.ID:        "gemini.json",
	Qwen.ID:          "qwen.json",
	OpenCode.ID:      "opencode.jsonc",
	Zed.ID:           "zed.json",
	LMStudio.ID:      "lmstudio.json",
	Goose.ID:         "goose.yaml",
}

// importOptions names Deskhand as the fixtures hold it.
var importOptions = ImportOptions{URLs: []string{testURL}, Commands: []string{testCmd}}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// place writes data as client c's file in env.
func place(t *testing.T, c Client, env Env, data []byte) string {
	t.Helper()
	p, err := Path(c, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// describe is a server in one line: name, target, plain env and header
// keys (values only for the plain ones), secrets, references, notes and
// where the client turns it off.
func describe(s FoundServer) string {
	var b strings.Builder
	b.WriteString(s.Name + ": ")
	if s.IsStdio() {
		b.WriteString(strings.Join(append([]string{s.Command}, s.Args...), " "))
		if s.Dir != "" {
			b.WriteString(" in " + s.Dir)
		}
	} else {
		b.WriteString(s.URL)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		fmt.Fprintf(&b, " env:%s=%s", k, s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		fmt.Fprintf(&b, " header:%s=%s", k, s.Headers[k])
	}
	for _, sec := range s.Secrets {
		fmt.Fprintf(&b, " secret-%s:%s", sec.Kind, sec.Key)
	}
	for _, r := range s.Refs {
		fmt.Fprintf(&b, " ref-%s:%s(%s)", r.Kind, r.Key, strings.Join(r.Needs, "; "))
	}
	if len(s.SecretArgs) > 0 {
		fmt.Fprintf(&b, " secret-args:%v", s.SecretArgs)
	}
	if s.SecretURL {
		b.WriteString(" secret-url")
	}
	for _, src := range s.Sources {
		if src.Disabled != "" {
			fmt.Fprintf(&b, " [off in %s %s%s: %s]", src.Client.ID, src.Scope, src.Folder, src.Disabled)
		}
		if len(src.TurnedOffIn) > 0 {
			fmt.Fprintf(&b, " [off in %s %s for %s]", src.Client.ID, src.Scope, strings.Join(src.TurnedOffIn, ","))
		}
		if src.Pending != "" {
			fmt.Fprintf(&b, " [pending in %s %s]", src.Client.ID, src.Scope)
		}
	}
	if len(s.Sources) > 1 {
		var from []string
		for _, src := range s.Sources {
			from = append(from, src.Client.ID+"/"+src.Scope+src.Folder+"/"+src.Name)
		}
		fmt.Fprintf(&b, " sources:%s", strings.Join(from, ","))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, " note:%q", n)
	}
	return b.String()
}

func describeAll(f Found) (servers, skipped []string) {
	for _, s := range f.Servers {
		servers = append(servers, describe(s))
	}
	for _, s := range f.Skipped {
		skipped = append(skipped, fmt.Sprintf("%s %s%s %s: %s", s.Source.Client.ID, s.Source.Scope, s.Source.Folder, s.Source.Name, s.Reason))
	}
	return servers, skipped
}

// TestFindServers reads each client's fixture: what is found (stdio and
// HTTP, plain and secret values, references, entries the client turns
// off) and what is skipped and why (Deskhand under its usual name and
// under another, transports Deskhand does not run, fields of the wrong
// type).
func TestFindServers(t *testing.T) {
	tests := []struct {
		client  Client
		servers []string
		skipped []string
	}{
		{Cursor, []string{
			`filesystem: npx -y @modelcontextprotocol/server-filesystem /home/ana/projects [off in cursor user: its entry says "disabled": true]`,
			`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues secret-env:GITHUB_PERSONAL_ACCESS_TOKEN`,
			`linear: https://mcp.linear.app/mcp header:X-Client=cursor secret-header:Authorization`,
		}, []string{
			`cursor user deskhand: it is Deskhand's own entry (by its name)`,
			`cursor user my agents: it is Deskhand's own entry (it points at Deskhand's address)`,
			`cursor user old-sse: it uses SSE, which Deskhand does not run (only stdio and Streamable HTTP)`,
		}},
		{ClaudeCode, []string{
			`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues secret-env:GITHUB_PERSONAL_ACCESS_TOKEN [off in claude-code user for /home/ana/shop] sources:claude-code/user/github,claude-code/local/home/ana/blog/github`,
			`sentry: https://mcp.sentry.dev/mcp ref-header:Authorization(variable SENTRY_TOKEN)`,
			`memory: npx -y @modelcontextprotocol/server-memory [off in claude-code local/home/ana/blog: Claude Code has it turned off in /home/ana/blog]`,
			`postgres: npx -y @modelcontextprotocol/server-postgres postgresql://shop:hunter2hunter2@localhost/shop secret-args:[2] note:"some of its arguments look like secrets: move them to environment variables, which Deskhand keeps in the keychain"`,
		}, []string{
			`claude-code user agents: it is Deskhand's own entry (it runs deskhand stdio)`,
			`claude-code user deskhand: it is Deskhand's own entry (by its name)`,
			`claude-code user untyped: it has a url but no type ("http" or "sse"), so how Claude Code reaches it is unclear`,
		}},
		{VSCode, []string{
			`context7: https://mcp.context7.com/mcp secret-header:CONTEXT7_API_KEY`,
			`fetch: uvx mcp-server-fetch note:"its envFile (${workspaceFolder}/.env) is not read: add those variables yourself"`,
			`perplexity: npx -y server-perplexity-ask env:LOG_LEVEL=info ref-env:PERPLEXITY_API_KEY(VS Code input "perplexity-key" ("Perplexity API Key"), a password)`,
		}, []string{
			`vscode user Deskhand Agents: it is Deskhand's own entry (it points at Deskhand's address)`,
			`vscode user deskhand: it is Deskhand's own entry (by its name)`,
			`vscode user legacy: it uses SSE, which Deskhand does not run (only stdio and Streamable HTTP)`,
		}},
		{Windsurf, []string{
			`brave-search: npx -y @modelcontextprotocol/server-brave-search secret-env:BRAVE_API_KEY`,
			`figma: https://mcp.figma.com/mcp secret-header:X-Figma-Token`,
			`puppeteer: npx -y @modelcontextprotocol/server-puppeteer [off in windsurf user: its entry says "disabled": true]`,
		}, []string{
			`windsurf user deskhand: it is Deskhand's own entry (by its name)`,
			`windsurf user dh: it is Deskhand's own entry (it points at Deskhand's address)`,
		}},
		{Codex, []string{
			`figma: https://mcp.figma.com/mcp header:X-Figma-Region=us-east-1 ref-header:Authorization(environment variable FIGMA_OAUTH_TOKEN)`,
			`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues secret-env:GITHUB_PERSONAL_ACCESS_TOKEN`,
			`notion: https://mcp.notion.com/mcp secret-header:Authorization ref-header:Notion-Version(environment variable NOTION_VERSION) [off in codex user: its entry says enabled = false]`,
		}, []string{
			`codex user broken: command is not a string`,
			`codex user deskhand: it is Deskhand's own entry (by its name)`,
			`codex user helpers: it is Deskhand's own entry (it runs deskhand stdio)`,
		}},
		{ClaudeDesktop, []string{
			`filesystem: npx -y @modelcontextprotocol/server-filesystem /Users/ana/Desktop /Users/ana/Downloads`,
			`slack: npx -y @modelcontextprotocol/server-slack env:SLACK_TEAM_ID=T01234567 secret-env:SLACK_BOT_TOKEN`,
		}, []string{
			`claude-desktop user assistants: it is Deskhand's own entry (it runs deskhand stdio)`,
			`claude-desktop user deskhand: it is Deskhand's own entry (by its name)`,
			`claude-desktop user remote: Claude Desktop runs only commands from its file; this url entry is not one it uses`,
		}},
		{Gemini, []string{
			`docs: https://docs.example.com/mcp note:"a url without a type is Streamable HTTP in current Gemini CLI (SSE in older ones): imported as Streamable HTTP"`,
			`excluded-one: python -m weather_server in /home/ana/weather [off in gemini user: its settings exclude it (mcp.excluded)]`,
			`github: npx -y @modelcontextprotocol/server-github ref-env:GITHUB_PERSONAL_ACCESS_TOKEN(environment variable GITHUB_TOKEN)`,
			`stripe: https://mcp.stripe.com secret-header:Authorization`,
		}, []string{
			`gemini user deskhand: it is Deskhand's own entry (by its name)`,
			`gemini user hands: it is Deskhand's own entry (it points at Deskhand's address)`,
		}},
		{Qwen, []string{
			`remote: https://mcp.example.com/mcp header:Accept-Language=en secret-header:X-Api-Key`,
			`tavily: npx -y tavily-mcp@0.2.4 secret-env:TAVILY_API_KEY`,
		}, []string{
			`qwen user desk: it is Deskhand's own entry (it points at Deskhand's address)`,
			`qwen user deskhand: it is Deskhand's own entry (by its name)`,
			`qwen user sse-one: its url is SSE in Qwen Code (httpUrl is Streamable HTTP), which Deskhand does not run`,
		}},
		{OpenCode, []string{
			`context7: https://mcp.context7.com/mcp ref-header:CONTEXT7_API_KEY(the content of the file ~/.secrets/context7) note:"opencode may sign in to it with OAuth, which Deskhand does not do: give it an Authorization header if it needs one"`,
			`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues ref-env:GITHUB_PERSONAL_ACCESS_TOKEN(environment variable GITHUB_TOKEN)`,
			`sentry: https://mcp.sentry.dev/mcp secret-header:Authorization [off in opencode user: its entry says "enabled": false]`,
		}, []string{
			`opencode user deskhand: it is Deskhand's own entry (by its name)`,
			`opencode user half: it has no type (opencode ignores such an entry)`,
			`opencode user helpers: it is Deskhand's own entry (it runs deskhand stdio)`,
		}},
		{Zed, []string{
			`old-style: /usr/local/bin/mcp-time --tz Europe/Paris`,
			`postgres: npx -y @modelcontextprotocol/server-postgres env:PGAPPNAME=zed secret-env:DATABASE_URL`,
			`remote: https://mcp.example.com/mcp secret-header:Authorization [off in zed user: its entry says "enabled": false]`,
		}, []string{
			`zed user Agents: it is Deskhand's own entry (it runs deskhand stdio)`,
			`zed user deskhand: it is Deskhand's own entry (by its name)`,
			`zed user mcp-server-github: it is a Zed extension's server, which only Zed runs`,
		}},
		{LMStudio, []string{
			`hf: https://huggingface.co/mcp secret-header:Authorization`,
			`playwright: npx @playwright/mcp@latest`,
			`search: https://mcp.example.org/mcp?api_key=FAKEqueryKEY0123&region=eu secret-url note:"its URL carries what looks like a secret: move it to a header, which Deskhand keeps in the keychain"`,
		}, []string{
			`lmstudio user deskhand: it is Deskhand's own entry (by its name)`,
			`lmstudio user local-agents: it is Deskhand's own entry (it points at Deskhand's address)`,
		}},
		{Goose, []string{
			`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues ref-env:GITHUB_PERSONAL_ACCESS_TOKEN(Goose's secret GITHUB_PERSONAL_ACCESS_TOKEN (in its keyring or secrets.yaml))`,
			`linear: https://mcp.linear.app/mcp secret-header:Authorization [off in goose user: its extension says enabled: false]`,
		}, []string{
			`goose user deskhand: it is Deskhand's own entry (by its name)`,
			`goose user developer: it is a Goose builtin extension, which only Goose runs`,
			`goose user jira: it uses SSE, which Deskhand does not run (only stdio and Streamable HTTP)`,
			`goose user myhands: it is Deskhand's own entry (it runs deskhand stdio)`,
			`goose user todo: it is a Goose platform extension, which only Goose runs`,
		}},
	}
	if len(tests) != len(Clients()) {
		t.Fatalf("%d cases for %d clients", len(tests), len(Clients()))
	}
	for _, tc := range tests {
		t.Run(tc.client.ID, func(t *testing.T) {
			env := testEnv(t)
			p := place(t, tc.client, env, readFixture(t, importFixtures[tc.client.ID]))
			opt := importOptions
			opt.Clients = []Client{tc.client}
			found := FindServers(env, opt)
			if len(found.Errors) > 0 {
				t.Fatalf("errors: %v", found.Errors)
			}
			servers, skipped := describeAll(found)
			if !slices.Equal(servers, tc.servers) {
				t.Errorf("servers:\n%s\nwant:\n%s", strings.Join(servers, "\n"), strings.Join(tc.servers, "\n"))
			}
			if !slices.Equal(skipped, tc.skipped) {
				t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(tc.skipped, "\n"))
			}
			for _, s := range found.Servers {
				if s.Sources[0].Path != p {
					t.Errorf("%s: path %q, want %q", s.Name, s.Sources[0].Path, p)
				}
				for _, sec := range s.Secrets {
					if sec.Value() == "" {
						t.Errorf("%s: secret %s has no value", s.Name, sec.Key)
					}
				}
			}
		})
	}
}

// TestFindServersSecretValues: the secrets keep their values, for the
// caller to put in the keychain, and the plain values are not secrets.
func TestFindServersSecretValues(t *testing.T) {
	env := testEnv(t)
	place(t, Cursor, env, readFixture(t, "cursor.json"))
	place(t, Codex, env, readFixture(t, "codex.toml"))
	opt := importOptions
	opt.Clients = []Client{Cursor, Codex}
	found := FindServers(env, opt)
	want := map[string]map[string]string{
		"github": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKEfakeFAKEfakeFAKEfake0123456789"},
		"linear": {"Authorization": "Bearer lin_api_FAKEfake0123456789"},
		"notion": {"Authorization": "Bearer ntn_FAKEfake0123456789"},
	}
	got := map[string]map[string]string{}
	for _, s := range found.Servers {
		for _, sec := range s.Secrets {
			if got[s.Name] == nil {
				got[s.Name] = map[string]string{}
			}
			got[s.Name][sec.Key] = sec.Value()
		}
	}
	if !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("secrets %v, want %v", got, want)
	}
}

// TestFindServersProject reads a project's files beside the user's: the
// project's server of the same name but another definition is renamed,
// the one Claude Code waits to be approved says so, and Deskhand's entry
// is skipped there too.
func TestFindServersProject(t *testing.T) {
	env := testEnv(t)
	place(t, ClaudeCode, env, readFixture(t, "claude-code.json"))
	env.Project = filepath.Join(env.Home, "shop")
	place(t, ClaudeCode, env, readFixture(t, "claude-code-project.mcp.json"))
	opt := importOptions
	opt.Clients = []Client{ClaudeCode}
	found := FindServers(env, opt)
	if len(found.Errors) > 0 {
		t.Fatal(found.Errors)
	}
	servers, skipped := describeAll(found)
	want := []string{
		`github: npx -y @modelcontextprotocol/server-github env:GITHUB_TOOLSETS=repos,issues secret-env:GITHUB_PERSONAL_ACCESS_TOKEN [off in claude-code user for /home/ana/shop] sources:claude-code/user/github,claude-code/local/home/ana/blog/github`,
		`sentry: https://mcp.sentry.dev/mcp ref-header:Authorization(variable SENTRY_TOKEN)`,
		`memory: npx -y @modelcontextprotocol/server-memory [off in claude-code local/home/ana/blog: Claude Code has it turned off in /home/ana/blog]`,
		`postgres: npx -y @modelcontextprotocol/server-postgres postgresql://shop:hunter2hunter2@localhost/shop secret-args:[2] note:"some of its arguments look like secrets: move them to environment variables, which Deskhand keeps in the keychain"`,
		`github-2: https://api.githubcopilot.com/mcp/ ref-header:Authorization(variable GITHUB_PAT) [pending in claude-code project] note:"renamed from \"github\" to github-2: another server of that name, defined otherwise, came first"`,
	}
	if !slices.Equal(servers, want) {
		t.Errorf("servers:\n%s\nwant:\n%s", strings.Join(servers, "\n"), strings.Join(want, "\n"))
	}
	if n := len(skipped); n != 4 || !strings.HasPrefix(skipped[3], "claude-code project deskhand: it is Deskhand's own entry") {
		t.Errorf("skipped: %q", skipped)
	}
}

// TestFindServersAcrossClients: the same server in several clients is one
// server with all its sources; Deskhand is found in none.
func TestFindServersAcrossClients(t *testing.T) {
	env := testEnv(t)
	for _, c := range Clients() {
		place(t, c, env, readFixture(t, importFixtures[c.ID]))
	}
	found := FindServers(env, importOptions)
	if len(found.Errors) > 0 {
		t.Fatal(found.Errors)
	}
	var names []string
	sources := map[string][]string{}
	for _, s := range found.Servers {
		names = append(names, s.Name)
		for _, src := range s.Sources {
			sources[s.Name] = append(sources[s.Name], src.Client.ID+"/"+src.Name)
		}
		if strings.Contains(s.URL, "47111") || strings.Contains(s.Command, "deskhand") {
			t.Errorf("Deskhand imported as %s", s)
		}
	}
	wantNames := []string{"filesystem", "github", "linear", "sentry", "memory", "postgres", "context7", "fetch", "perplexity",
		"brave-search", "figma", "puppeteer", "notion", "filesystem-2", "slack", "docs", "excluded-one", "stripe",
		"remote", "tavily", "old-style", "postgres-2", "hf", "playwright", "search"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("names %q\nwant %q", names, wantNames)
	}
	wantGitHub := []string{"cursor/github", "claude-code/github", "claude-code/github", "codex/github", "gemini/github", "opencode/github", "goose/github"}
	if !slices.Equal(sources["github"], wantGitHub) {
		t.Errorf("github from %q, want %q", sources["github"], wantGitHub)
	}
	for name, want := range map[string][]string{
		"figma":  {"windsurf/figma", "codex/figma"},
		"sentry": {"claude-code/sentry", "opencode/sentry"},
		"remote": {"qwen/remote", "zed/remote"},
	} {
		if !slices.Equal(sources[name], want) {
			t.Errorf("%s from %q, want %q", name, sources[name], want)
		}
	}
	for _, s := range found.Servers {
		if s.Name == "github" && len(s.Notes) == 0 {
			t.Error("github: no note that its sources give other environment variables")
		}
	}
}

// TestFindServersBadFiles: a file that does not parse, is too large, or
// (in a project) links out of the project is reported, and the other
// files are still read.
func TestFindServersBadFiles(t *testing.T) {
	env := testEnv(t)
	place(t, Cursor, env, []byte(`{"mcpServers": {"x": {"env": {"API_KEY": "sk-FAKEfakeFAKEfake0123456789"}}`))
	place(t, Windsurf, env, append([]byte(`{"a":"`), bytes.Repeat([]byte("x"), maxSize)...))
	place(t, LMStudio, env, readFixture(t, "lmstudio.json"))
	outside := filepath.Join(env.Home, "elsewhere.json")
	if err := os.WriteFile(outside, readFixture(t, "cursor.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Project = filepath.Join(env.Home, "proj")
	if err := os.MkdirAll(filepath.Join(env.Project, ".cursor"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Project, ".cursor", "mcp.json")); err != nil {
		t.Skip("no symlinks:", err)
	}
	opt := importOptions
	opt.Clients = []Client{Cursor, Windsurf, LMStudio}
	found := FindServers(env, opt)
	if len(found.Servers) != 3 {
		t.Errorf("servers: %v", found.Servers)
	}
	var pe *ParseError
	var le *LimitError
	var ue *UnsafePathError
	if len(found.Errors) != 3 || !errors.As(found.Errors[0], &pe) || !errors.As(found.Errors[1], &ue) || !errors.As(found.Errors[2], &le) {
		t.Fatalf("errors: %v", found.Errors)
	}
	for _, err := range found.Errors {
		if strings.Contains(err.Error(), "sk-FAKE") || strings.Contains(err.Error(), "dh_FAKE") {
			t.Errorf("secret in error text: %v", err)
		}
	}
}

// secretValues are the secret values in the fixtures.
var secretValues = []string{"ghp_FAKE", "lin_api_FAKE", "dh_FAKE", "ctx7sk-FAKE", "BSAfake", "figd_FAKE", "ntn_FAKE", "xoxb-FAKE",
	"sk-live-FAKE", "tvly-FAKE", "abc123abc123", "sntrys_FAKE", "s3cretpass", "FAKEfakeFAKEfake0123", "hf_FAKE", "hunter2hunter2", "sk-FAKEarg", "FAKEqueryKEY"}

// TestImportPrintsNoSecret: no secret value shows in String, GoString,
// %v, %+v, slog (text and JSON) or error text, for any fixture.
func TestImportPrintsNoSecret(t *testing.T) {
	env := testEnv(t)
	for _, c := range Clients() {
		place(t, c, env, readFixture(t, importFixtures[c.ID]))
	}
	found := FindServers(env, ImportOptions{})
	nsecrets := 0
	var out bytes.Buffer
	for _, s := range found.Servers {
		nsecrets += len(s.Secrets) + len(s.SecretArgs)
		fmt.Fprintf(&out, "%s\n%v\n%+v\n%#v\n", s, s, s, s)
		for _, sec := range s.Secrets {
			fmt.Fprintf(&out, "%s %v %+v %#v\n", sec, sec, sec, sec)
		}
		slog.New(slog.NewTextHandler(&out, nil)).Info("found", "server", s, "secrets", s.Secrets)
		slog.New(slog.NewJSONHandler(&out, nil)).Info("found", "server", s, "secrets", s.Secrets)
	}
	// An argument that is a key, not a URL.
	args, _, err := serversIn(Cursor, importFile{path: "f", scope: ScopeUser, env: env},
		[]byte(`{"mcpServers":{"x":{"command":"srv","args":["--key","sk-FAKEargFAKEarg0123456789"]}}}`))
	if err != nil || len(args) != 1 || !slices.Equal(args[0].SecretArgs, []int{1}) {
		t.Fatalf("secret argument: %v, %v", args, err)
	}
	found.Servers = append(found.Servers, args...)
	for _, s := range args {
		fmt.Fprintf(&out, "%s\n%v\n%+v\n%#v\n", s, s, s, s)
		slog.New(slog.NewTextHandler(&out, nil)).Info("found", "server", s)
	}
	fmt.Fprintf(&out, "%v %+v", found, found)
	for _, sk := range found.Skipped {
		out.WriteString(sk.String() + "\n")
	}
	if nsecrets < 12 {
		t.Fatalf("only %d secrets found", nsecrets)
	}
	text := out.String()
	for _, v := range secretValues {
		if strings.Contains(text, v) {
			i := strings.Index(text, v)
			t.Errorf("secret %q printed: …%s…", v, text[max(0, i-80):min(len(text), i+40)])
		}
	}
	if !strings.Contains(text, "GITHUB_PERSONAL_ACCESS_TOKEN") || !strings.Contains(text, "[secret]") {
		t.Error("the secrets' names are not printed")
	}
}

func TestSanitizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"github", "github"},
		{"my agents", "my-agents"},
		{"Deskhand Agents", "Deskhand-Agents"},
		{"a__b___c", "a_b_c"},
		{"_x_", "x"},
		{"@scope/server.name", "scope-server-name"},
		{"", "server"},
		{"日本", "server"},
		{strings.Repeat("abcdefghij", 4), "abcdefghijabcdefghijabcdefghijab"},
		{strings.Repeat("a", 31) + "_b", strings.Repeat("a", 31)},
	} {
		if got := SanitizeName(tc.in); got != tc.want {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMergeRenames: clashing names get -2, -3 within the length limit.
func TestMergeRenames(t *testing.T) {
	long := strings.Repeat("x", 40)
	mk := func(name, cmd string) FoundServer {
		return FoundServer{Name: name, Command: cmd, Sources: []Source{{Client: Cursor, Name: name}}}
	}
	got := merge([]FoundServer{mk(long, "a"), mk(long, "b"), mk(long, "c"), mk(long, "a"), mk("x-2", "d"), mk(long, "b")})
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	x32, x30 := strings.Repeat("x", 32), strings.Repeat("x", 30)
	want := []string{x32, x30 + "-2", x30 + "-3", "x-2"}
	if !slices.Equal(names, want) || len(got[0].Sources) != 2 || len(got[1].Sources) != 2 {
		t.Errorf("names %q (first from %d sources, second from %d), want %q", names, len(got[0].Sources), len(got[1].Sources), want)
	}
}

// FuzzImport: whatever a client's file holds, reading its servers returns
// a ParseError or LimitError or servers whose printed form holds none of
// their secrets.
func FuzzImport(f *testing.F) {
	for i, c := range Clients() {
		f.Add(string(readFixture(f, importFixtures[c.ID])), uint8(i))
	}
	f.Add(`{"mcpServers":{"a":{"command":1}}}`, uint8(0))
	f.Add(`{"mcp":{"servers":{"a":{"type":"local","command":[]}}}}`, uint8(8))
	f.Add("extensions:\n  a: {type: stdio, cmd: x, envs: {K: [1]}}\n", uint8(11))
	f.Fuzz(func(t *testing.T, content string, which uint8) {
		clients := Clients()
		c := clients[int(which)%len(clients)]
		env := Env{OS: "linux", Home: filepath.Join(string(filepath.Separator), "nonexistent-home")}
		servers, _, err := serversIn(c, importFile{path: "f", scope: ScopeUser, env: env}, []byte(content))
		if err != nil {
			var pe *ParseError
			var le *LimitError
			if !errors.As(err, &pe) && !errors.As(err, &le) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		for _, s := range servers {
			text := s.String()
			for _, sec := range s.Secrets {
				if len(sec.Value()) >= 4 && strings.Contains(text, sec.Value()) && !strings.Contains(s.Name+" "+sec.Key, sec.Value()) {
					t.Fatalf("secret %s printed: %s", sec.Key, text)
				}
			}
		}
	})
}

// TestFindServersOwnEntry: Deskhand's entry under the name the person
// gave it is skipped by that name, or by the Deskhand token it sends to
// this machine, with no address known.
func TestFindServersOwnEntry(t *testing.T) {
	for _, tc := range []struct {
		entry string
		names []string
		want  string // the reason it is skipped; "" when imported
	}{
		{`{"url": "http://127.0.0.1:47111/mcp"}`, nil, ""},
		{`{"url": "http://127.0.0.1:47111/mcp"}`, []string{"my agents"}, "it is Deskhand's own entry (by its name)"},
		{`{"url": "http://localhost:47111/mcp", "headers": {"Authorization": "Bearer dh_FAKEfakeFAKEfake0123456789"}}`, nil, "it is Deskhand's own entry (it sends a Deskhand token to this machine)"},
		{`{"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer dh_FAKEfakeFAKEfake0123456789"}}`, nil, ""},
		{`{"command": "/usr/local/bin/deskhand", "args": ["stdio"]}`, nil, "it is Deskhand's own entry (it runs deskhand stdio)"},
		{`{"command": "/usr/local/bin/deskhand", "args": ["version"]}`, nil, ""},
	} {
		env := testEnv(t)
		place(t, Cursor, env, []byte(`{"mcpServers": {"my agents": `+tc.entry+`}}`))
		found := FindServers(env, ImportOptions{Names: tc.names, Clients: []Client{Cursor}})
		var reason string
		if len(found.Skipped) == 1 {
			reason = found.Skipped[0].Reason
		}
		if reason != tc.want || len(found.Servers)+len(found.Skipped) != 1 {
			t.Errorf("%s, names %q: servers %v, skipped %v; want skipped because %q", tc.entry, tc.names, found.Servers, found.Skipped, tc.want)
		}
	}
}

// TestFindServersOpenCodeV2: opencode 2's mcp.servers holds servers,
// with disabled in place of enabled.
func TestFindServersOpenCodeV2(t *testing.T) {
	env := testEnv(t)
	place(t, OpenCode, env, []byte(`{"mcp": {
  "servers": {
    "time": {"type": "local", "command": ["uvx", "mcp-server-time"], "disabled": true},
    "docs": {"type": "remote", "url": "https://docs.example.com/mcp", "oauth": false},
  },
  "fetch": {"type": "local", "command": ["uvx", "mcp-server-fetch"]},
}}`))
	found := FindServers(env, ImportOptions{Clients: []Client{OpenCode}})
	servers, skipped := describeAll(found)
	want := []string{
		`fetch: uvx mcp-server-fetch`,
		`docs: https://docs.example.com/mcp`,
		`time: uvx mcp-server-time [off in opencode user: its entry under mcp.servers says "disabled": true]`,
	}
	if !slices.Equal(servers, want) || len(skipped) != 0 || len(found.Errors) != 0 {
		t.Errorf("servers:\n%s\nskipped %q, errors %v", strings.Join(servers, "\n"), skipped, found.Errors)
	}
}
