package connect

// Importing the person's own MCP servers from their clients' files.
//
// FindServers reads every client's file with the same strict parsers, size
// and depth limits and link rules as the writers (a project's file that
// links out of the project is refused), and reports each server entry it
// finds as a FoundServer, or as Skipped with the reason. Nothing is
// guessed: an entry whose transport Deskhand cannot run (SSE, a Zed
// extension, a Goose built-in) or whose fields have unexpected types is
// skipped. The entry formats, beyond Deskhand's own (see the package
// comment), from each client's documentation:
//
//   - Cursor, LM Studio, Claude Desktop: mcpServers.NAME {command, args,
//     env} or {url, headers} (docs.cursor.com/context/model-context-protocol;
//     lmstudio.ai/docs/app/mcp "follows Cursor's mcp.json notation";
//     modelcontextprotocol.io/quickstart/user for Claude Desktop, stdio only).
//   - Windsurf: mcpServers.NAME {command, args, env} or {serverUrl, headers},
//     "disabled": true turning one off (docs.windsurf.com/windsurf/cascade/mcp).
//   - Claude Code: ~/.claude.json mcpServers (user scope) and
//     projects[FOLDER].mcpServers (local scope), a project's .mcp.json;
//     {type: stdio, command, args, env} or {type: http, url, headers}; type
//     sse is not run (code.claude.com/docs/en/mcp).
//   - VS Code: servers.NAME {type: stdio, command, args, env, envFile, cwd}
//     or {type: http, url, headers}; inputs[] {id, description, password}
//     referenced as ${input:ID} (code.visualstudio.com/docs/copilot/
//     customization/mcp-servers, "Configuration format").
//   - Codex: [mcp_servers.NAME] command, args, env, env_vars, cwd, or url,
//     http_headers, env_http_headers, bearer_token_env_var; enabled
//     (openai/codex codex-rs/core/src/config/types.rs McpServerConfig, codex-rs/cli/src/mcp_cmd.rs).
//   - Gemini CLI, Qwen Code: mcpServers.NAME {command, args, env, cwd} or
//     {httpUrl, headers}, or {url, type: "http"}; a bare url is SSE in Qwen
//     Code and older Gemini CLI, Streamable HTTP in current Gemini CLI
//     (gemini-cli docs/tools/mcp-server.md, packages/core/src/tools/
//     mcp-client.ts; qwen-code docs/users/features/mcp.md).
//   - opencode: mcp.NAME {type: local, command: [CMD, ARGS…], environment,
//     cwd, enabled} or {type: remote, url, headers, enabled, oauth}; V2's
//     mcp.servers.NAME with disabled (opencode.ai/docs/mcp-servers,
//     opencode.ai/docs/migrate-v1).
//   - Zed: context_servers.NAME {command, args, env} or {url, headers}, or
//     the older {source: custom, command: {path, args, env}}; {settings}
//     is an extension's server (zed.dev/docs/ai/mcp,
//     crates/settings_content/src/project.rs).
//   - Goose: extensions.NAME {type: stdio, cmd, args, envs, env_keys} or
//     {type: streamable_http, uri, headers, envs, env_keys}; builtin,
//     platform, sse and the others are not run
//     (block/goose crates/goose/src/agents/extension.rs).

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/deskhand/deskhand/server/agent"
)

// MaxServerName is the longest name FindServers gives a server, so that
// its tools' names (SERVER__TOOL) keep room within 64 characters.
const MaxServerName = 32

// Scopes of a Source.
const (
	ScopeUser    = "user"    // the client's user-level file
	ScopeProject = "project" // the project folder's file (Env.Project)
	ScopeLocal   = "local"   // Claude Code's per-folder servers in ~/.claude.json
)

// Source is one place a server was found.
type Source struct {
	Client Client
	Scope  string // ScopeUser, ScopeProject or ScopeLocal
	Folder string // the project folder of a ScopeLocal source
	Path   string // the configuration file
	Name   string // the entry's name there
	// Disabled says why the client does not use the entry ("" when it
	// does): its own switch, an exclude list, a project turning it off.
	Disabled string
	// Pending says what the person must approve in the client before it
	// uses the entry; "" when nothing.
	Pending string
	// TurnedOffIn lists the project folders where the client turned this
	// user-level entry off (Claude Code's /mcp disable), sorted.
	TurnedOffIn []string
}

func (s Source) String() string {
	where := s.Client.Name + " " + s.Scope
	if s.Folder != "" {
		where += " " + s.Folder
	}
	return fmt.Sprintf("%s (%s, entry %q)", where, s.Path, s.Name)
}

// ValueKind is what a Secret or a Ref is the value of.
type ValueKind string

// Value kinds.
const (
	EnvVar ValueKind = "env"    // an environment variable of a stdio server
	Header ValueKind = "header" // an HTTP header of a Streamable HTTP server
)

// Secret is an environment variable or header whose value is a secret (by
// its name or the look of its value): the caller moves it to the keychain.
// Its value is never printed: String, GoString and LogValue show its name
// only.
type Secret struct {
	Kind  ValueKind
	Key   string
	value string
}

// Value is the secret value.
func (s Secret) Value() string { return s.value }

func (s Secret) String() string   { return fmt.Sprintf("%s %s=[secret]", s.Kind, s.Key) }
func (s Secret) GoString() string { return "connect.Secret{" + s.String() + "}" }

// LogValue logs the secret's kind and name, never its value.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", string(s.Kind)), slog.String("key", s.Key))
}

// Ref is an environment variable or header whose value refers to
// something the client fills in when it starts the server (${env:X},
// ${input:x}, $X, {env:X}, Goose's env_keys): the value is not copied, the
// person gives one.
type Ref struct {
	Kind  ValueKind
	Key   string
	Value string // the value as written, e.g. "Bearer ${env:GITHUB_TOKEN}"; "" for Goose's env_keys
	// Needs says in words what the client would have filled in, e.g.
	// `environment variable GITHUB_TOKEN` or `VS Code input "pat" ("GitHub
	// token", a password)`.
	Needs []string
}

// FoundServer is an MCP server found in the clients' files.
type FoundServer struct {
	// Name is the name to register it under: letters, digits, '_' and '-',
	// at most MaxServerName, no "__", unique among the servers found.
	Name string
	// Sources lists where it was found, the first being where its
	// definition was read.
	Sources []Source

	// Command, Args, Dir and Env run a stdio server.
	Command string
	Args    []string
	Dir     string
	Env     map[string]string // plain values only: secrets are in Secrets
	// URL and Headers reach a Streamable HTTP server.
	URL     string
	Headers map[string]string // plain values only: secrets are in Secrets

	Secrets []Secret
	Refs    []Ref
	// SecretArgs are the indexes of Args that look like secrets (a key, a
	// URL with a password), and SecretURL says that URL carries one (a
	// password, a key in its query): kept, since the server needs them,
	// but never printed; the caller asks the person to move them to an
	// environment variable or header before saving, since argv and URLs
	// are not kept in the keychain.
	SecretArgs []int
	SecretURL  bool
	// Notes tell the person what was changed or left out, e.g. a rename.
	Notes []string
}

// IsStdio reports whether the server is run as a command.
func (s FoundServer) IsStdio() bool { return s.Command != "" }

// Disabled reports whether every client it came from has it turned off.
func (s FoundServer) Disabled() bool {
	for _, src := range s.Sources {
		if src.Disabled == "" {
			return false
		}
	}
	return len(s.Sources) > 0
}

// redactedArgs are the arguments with the secret ones replaced.
func (s FoundServer) redactedArgs() []string {
	out := slices.Clone(s.Args)
	for _, i := range s.SecretArgs {
		if i >= 0 && i < len(out) {
			out[i] = "[secret]"
		}
	}
	for i, a := range out {
		if looksLikeURL(a) {
			out[i] = redactURL(a)
		}
	}
	return out
}

// String describes the server without any secret (nor any value of an
// environment variable or header, plain or not).
func (s FoundServer) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if s.IsStdio() {
		fmt.Fprintf(&b, " (stdio: %s", redactArg(s.Command))
		for _, a := range s.redactedArgs() {
			b.WriteString(" " + a)
		}
		b.WriteString(")")
	} else {
		fmt.Fprintf(&b, " (http: %s)", redactURL(s.URL))
	}
	if keys := slices.Sorted(maps.Keys(s.Env)); len(keys) > 0 {
		fmt.Fprintf(&b, " env %s", strings.Join(keys, ","))
	}
	if keys := slices.Sorted(maps.Keys(s.Headers)); len(keys) > 0 {
		fmt.Fprintf(&b, " headers %s", strings.Join(keys, ","))
	}
	if len(s.Secrets) > 0 {
		var keys []string
		for _, sec := range s.Secrets {
			keys = append(keys, string(sec.Kind)+" "+sec.Key)
		}
		fmt.Fprintf(&b, " secrets %s", strings.Join(keys, ","))
	}
	if len(s.Refs) > 0 {
		var keys []string
		for _, r := range s.Refs {
			keys = append(keys, string(r.Kind)+" "+r.Key)
		}
		fmt.Fprintf(&b, " needs %s", strings.Join(keys, ","))
	}
	for i, src := range s.Sources {
		sep := " from "
		if i > 0 {
			sep = "; "
		}
		b.WriteString(sep + src.String())
	}
	return b.String()
}

// GoString is String, so that %#v prints no secret either.
func (s FoundServer) GoString() string { return "connect.FoundServer{" + s.String() + "}" }

// LogValue logs the server without any value of an environment variable
// or header.
func (s FoundServer) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("name", s.Name)}
	if s.IsStdio() {
		attrs = append(attrs, slog.String("command", redactArg(s.Command)), slog.Any("args", s.redactedArgs()))
	} else {
		attrs = append(attrs, slog.String("url", redactURL(s.URL)))
	}
	attrs = append(attrs,
		slog.Any("env", slices.Sorted(maps.Keys(s.Env))),
		slog.Any("headers", slices.Sorted(maps.Keys(s.Headers))),
		slog.Int("secrets", len(s.Secrets)),
		slog.Int("refs", len(s.Refs)))
	var srcs []string
	for _, src := range s.Sources {
		srcs = append(srcs, src.String())
	}
	attrs = append(attrs, slog.Any("sources", srcs))
	return slog.GroupValue(attrs...)
}

// Skipped is an entry that was not imported, and why.
type Skipped struct {
	Source Source
	Reason string
}

func (s Skipped) String() string { return s.Source.String() + ": " + s.Reason }

// FileError is a client's file that could not be read (a ParseError,
// LimitError, UnsafePathError…); the other files are still read.
type FileError struct {
	Client Client
	Path   string
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("connect: %s's file %s: %v", e.Client.Name, e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Found is what FindServers found.
type Found struct {
	Servers []FoundServer
	Skipped []Skipped
	Errors  []*FileError
}

// ImportOptions tells FindServers which entries are Deskhand's own.
type ImportOptions struct {
	// Names are Deskhand's entry names in the clients, besides
	// DefaultName.
	Names []string
	// URLs are Deskhand's endpoints: an HTTP entry that points at the same
	// host and port (any loopback name counting as one) is Deskhand's.
	URLs []string
	// Commands are paths of Deskhand's binary: a stdio entry running one
	// (or any program named deskhand) with the argument "stdio" is
	// Deskhand's.
	Commands []string
	// Clients limits the clients read; all when nil.
	Clients []Client
}

// FindServers reads the MCP servers of every client's user-level file
// and, when env.Project is set, of the project folder's files. Deskhand's
// own entries (by name or shape, see ImportOptions) are skipped. Servers
// with the same name and the same command or URL are merged; a second
// server of the same name but another definition is renamed NAME-2. The
// result is in client order (Clients), user scope first, names sorted.
func FindServers(env Env, opt ImportOptions) Found {
	clients := opt.Clients
	if clients == nil {
		clients = Clients()
	}
	var found Found
	var all []FoundServer
	for _, c := range clients {
		for _, fs := range importFiles(c, env) {
			servers, skipped, err := readServers(c, fs)
			if err != nil {
				found.Errors = append(found.Errors, &FileError{Client: c, Path: fs.path, Err: err})
				continue
			}
			for _, s := range servers {
				if reason := deskhands(s, opt); reason != "" {
					skipped = append(skipped, Skipped{Source: s.Sources[0], Reason: reason})
					continue
				}
				all = append(all, s)
			}
			slices.SortStableFunc(skipped, func(a, b Skipped) int {
				return cmp.Or(cmp.Compare(a.Source.Folder, b.Source.Folder), cmp.Compare(a.Source.Name, b.Source.Name))
			})
			found.Skipped = append(found.Skipped, skipped...)
		}
	}
	found.Servers = merge(all)
	return found
}

// importFile is a file to read, and its scope.
type importFile struct {
	path  string
	scope string
	env   Env // env.Project set for a project file (its link rules)
}

func importFiles(c Client, env Env) []importFile {
	var files []importFile
	user := env
	user.Project = ""
	if p, err := Path(c, user); err == nil {
		files = append(files, importFile{p, ScopeUser, user})
	}
	if env.Project != "" {
		if p, err := projectPath(c, env.Project); err == nil {
			files = append(files, importFile{p, ScopeProject, env})
		}
	}
	return files
}

// entriesKey is where each client keeps its servers.
func entriesKey(c Client) string {
	switch c.ID {
	case VSCode.ID:
		return "servers"
	case Codex.ID:
		return tomlServers
	case OpenCode.ID:
		return "mcp"
	case Zed.ID:
		return "context_servers"
	case Goose.ID:
		return yamlServers
	}
	return "mcpServers"
}

// decodeFile parses a client's file strictly, within the limits, into a
// plain document.
func decodeFile(c Client, path string, data []byte) (map[string]any, error) {
	f, err := formatOf(c)
	if err != nil {
		return nil, err
	}
	switch f := f.(type) {
	case jsonFormat:
		v, err := f.parse(path, data)
		if err != nil {
			return nil, err
		}
		if _, _, err := f.servers(path, v.Value.(*hujson.Object)); err != nil {
			return nil, err
		}
		std, err := hujson.Standardize(v.Pack())
		if err != nil {
			return nil, &ParseError{Path: path, Format: f.name(), Err: err}
		}
		var doc map[string]any
		if err := json.Unmarshal(std, &doc); err != nil {
			return nil, &ParseError{Path: path, Format: f.name(), Err: err}
		}
		return doc, nil
	case tomlFormat:
		return f.decode(path, data)
	case yamlFormat:
		doc, err := f.parse(path, data)
		return doc.value, err
	}
	return nil, fmt.Errorf("connect: %s: no reader", c.Name)
}

// readServers reads one file's servers (nothing when it is missing).
func readServers(c Client, file importFile) ([]FoundServer, []Skipped, error) {
	f, err := formatOf(c)
	if err != nil {
		return nil, nil, err
	}
	fl, err := open(file.path, file.env, f)
	if err != nil || !fl.existed {
		return nil, nil, err
	}
	return serversIn(c, file, fl.data)
}

// serversIn reads the servers in data, the content of file.
func serversIn(c Client, file importFile, data []byte) ([]FoundServer, []Skipped, error) {
	doc, err := decodeFile(c, file.path, data)
	if err != nil {
		return nil, nil, err
	}
	type group struct {
		folder  string
		entries map[string]any
	}
	groups := []group{{"", asMap(doc[entriesKey(c)])}}
	if c.ID == OpenCode.ID {
		// V2's mcp.servers holds servers; V1's mcp.servers would be a
		// server named "servers", which has a type.
		if v2 := asMap(groups[0].entries["servers"]); v2 != nil && v2["type"] == nil {
			delete(groups[0].entries, "servers")
			groups = append(groups, group{"", v2})
		}
	}
	if c.ID == ClaudeCode.ID && file.scope == ScopeUser {
		projects := asMap(doc["projects"])
		for _, dir := range slices.Sorted(maps.Keys(projects)) {
			if e := asMap(asMap(projects[dir])["mcpServers"]); len(e) > 0 {
				groups = append(groups, group{dir, e})
			}
		}
	}
	var servers []FoundServer
	var skipped []Skipped
	for gi, g := range groups {
		for _, name := range slices.Sorted(maps.Keys(g.entries)) {
			src := Source{Client: c, Scope: file.scope, Path: file.path, Name: name}
			if g.folder != "" {
				src.Scope, src.Folder = ScopeLocal, g.folder
			}
			src.Disabled, src.Pending, src.TurnedOffIn = entrySwitches(c, file, data, doc, g.folder, gi > 0 && c.ID == OpenCode.ID, name, asMap(g.entries[name]))
			m, ok := g.entries[name].(map[string]any)
			if !ok {
				skipped = append(skipped, Skipped{src, "the entry is not an object"})
				continue
			}
			d, reason := parseEntry(c, m, doc)
			if reason != "" {
				skipped = append(skipped, Skipped{src, reason})
				continue
			}
			servers = append(servers, d.server(src))
		}
	}
	return servers, skipped, nil
}

// entrySwitches says why the client does not use the entry, and what it
// waits for, reusing what Status reads for Deskhand's own entry.
func entrySwitches(c Client, file importFile, data []byte, doc map[string]any, folder string, v2 bool, name string, m map[string]any) (disabled, pending string, offIn []string) {
	if folder != "" { // Claude Code's local scope
		if matchesExactly(field(doc, "projects", folder, "disabledMcpServers"), name) {
			return "Claude Code has it turned off in " + folder, "", nil
		}
		return "", "", nil
	}
	if v2 {
		if d, ok := m["disabled"].(bool); ok && d {
			return `its entry under mcp.servers says "disabled": true`, "", nil
		}
		return "", "", nil
	}
	disabled = disabledIn(c, data, name)
	if d, ok := m["disabled"].(bool); ok && d && disabled == "" && c.ID != OpenCode.ID {
		disabled = `its entry says "disabled": true`
	}
	if c.ID == ClaudeCode.ID && file.scope == ScopeUser {
		// As stateOutside does, from the document parsed already (the file
		// may be large).
		return disabled, "", projectsTurningOff(doc, name)
	}
	out := stateOutside(c, file.env, data, name)
	return cmp.Or(disabled, out.disabled), out.pending, out.offIn
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// definition is an entry read in a client's dialect.
type definition struct {
	command string
	args    []string
	dir     string
	env     map[string]string
	url     string
	headers map[string]string
	refs    []Ref // values to be given (Goose's env_keys, Codex's env vars)
	notes   []string
	inputs  map[string]string // VS Code inputs: id → what it asks
}

// fieldError is an entry field of an unexpected type.
type fieldError struct{ key, want string }

func (e fieldError) Error() string { return fmt.Sprintf("%s is not %s", e.key, e.want) }

// reader reads an entry's fields, remembering the first one of the wrong
// type.
type reader struct {
	m   map[string]any
	err error
}

func (r *reader) fail(key, want string) {
	if r.err == nil {
		r.err = fieldError{key, want}
	}
}

func (r *reader) str(key string) string {
	v, ok := r.m[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail(key, "a string")
	}
	return s
}

func (r *reader) list(key string) []string {
	v, ok := r.m[key]
	if !ok || v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		r.fail(key, "a list of strings")
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := scalar(it)
		if !ok {
			r.fail(key, "a list of strings")
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) strMap(key string) map[string]string {
	v, ok := r.m[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail(key, "a map of strings")
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := scalar(v)
		if !ok {
			r.fail(key+"."+k, "a string")
			return nil
		}
		out[k] = s
	}
	return out
}

// scalar is a string, or a number or boolean written without quotes
// (PORT: 8080 in YAML), as text.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	}
	return "", false
}

// parseEntry reads entry m of client c; reason says why it is skipped.
func parseEntry(c Client, m map[string]any, doc map[string]any) (definition, string) {
	r := &reader{m: m}
	var d definition
	var reason string
	switch c.ID {
	case Codex.ID:
		reason = d.codex(r)
	case OpenCode.ID:
		reason = d.openCode(r)
	case Zed.ID:
		reason = d.zed(r)
	case Goose.ID:
		reason = d.goose(r)
	default:
		reason = d.mcpServers(c, r, doc)
	}
	if r.err != nil {
		return d, r.err.Error()
	}
	if reason != "" {
		return d, reason
	}
	if d.command == "" && d.url == "" {
		return d, "it has neither a command nor a URL"
	}
	if d.url != "" {
		u, err := url.Parse(d.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return d, "its URL is not an http(s) URL"
		}
	}
	return d, ""
}

// mcpServers reads the mcpServers dialects (Cursor, Claude Code, VS Code,
// Windsurf, Claude Desktop, Gemini CLI, Qwen Code, LM Studio).
func (d *definition) mcpServers(c Client, r *reader, doc map[string]any) string {
	typ := r.str("type")
	d.command, d.args, d.env, d.dir = r.str("command"), r.list("args"), r.strMap("env"), r.str("cwd")
	d.headers = r.strMap("headers")
	url, serverURL, httpURL := r.str("url"), r.str("serverUrl"), r.str("httpUrl")
	if r.err != nil {
		return ""
	}
	if c.ID == VSCode.ID {
		if f := r.str("envFile"); f != "" {
			d.notes = append(d.notes, "its envFile ("+f+") is not read: add those variables yourself")
		}
		d.inputs = vsCodeInputs(doc)
	}
	switch typ {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	case "sse":
		return "it uses SSE, which Deskhand does not run (only stdio and Streamable HTTP)"
	default:
		return fmt.Sprintf("its type %q is not one Deskhand knows", typ)
	}
	if d.command != "" {
		if typ != "" && typ != "stdio" {
			return fmt.Sprintf("it has a command but type %q", typ)
		}
		return ""
	}
	if typ == "stdio" {
		return "its type is stdio but it has no command"
	}
	switch {
	case httpURL != "":
		d.url = httpURL
	case serverURL != "" && c.ID == Windsurf.ID:
		d.url = serverURL
	case url != "":
		d.url = url
		if typ != "" {
			break
		}
		switch c.ID {
		case Qwen.ID:
			return "its url is SSE in Qwen Code (httpUrl is Streamable HTTP), which Deskhand does not run"
		case ClaudeCode.ID:
			return `it has a url but no type ("http" or "sse"), so how Claude Code reaches it is unclear`
		case ClaudeDesktop.ID:
			return "Claude Desktop runs only commands from its file; this url entry is not one it uses"
		case Gemini.ID:
			d.notes = append(d.notes, "a url without a type is Streamable HTTP in current Gemini CLI (SSE in older ones): imported as Streamable HTTP")
		}
	}
	return ""
}

// vsCodeInputs reads VS Code's inputs: id → what it asks for.
func vsCodeInputs(doc map[string]any) map[string]string {
	list, _ := doc["inputs"].([]any)
	out := map[string]string{}
	for _, it := range list {
		m := asMap(it)
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		what := fmt.Sprintf("VS Code input %q", id)
		if desc, _ := m["description"].(string); desc != "" {
			what += fmt.Sprintf(" (%q)", desc)
		}
		if pw, _ := m["password"].(bool); pw {
			what += ", a password"
		}
		out[id] = what
	}
	return out
}

func (d *definition) codex(r *reader) string {
	d.command, d.args, d.env, d.dir = r.str("command"), r.list("args"), r.strMap("env"), r.str("cwd")
	d.url, d.headers = r.str("url"), r.strMap("http_headers")
	envVars := r.list("env_vars")
	envHeaders := r.strMap("env_http_headers")
	bearerVar := r.str("bearer_token_env_var")
	bearerToken := r.str("bearer_token")
	if r.err != nil {
		return ""
	}
	if d.command != "" && d.url != "" {
		return "it has both a command and a url"
	}
	for _, v := range envVars {
		d.refs = append(d.refs, Ref{Kind: EnvVar, Key: v, Value: "$" + v, Needs: []string{"environment variable " + v + " (Codex passes it through)"}})
	}
	for _, h := range slices.Sorted(maps.Keys(envHeaders)) {
		d.refs = append(d.refs, Ref{Kind: Header, Key: h, Value: "${env:" + envHeaders[h] + "}", Needs: []string{"environment variable " + envHeaders[h]}})
	}
	if bearerVar != "" {
		d.refs = append(d.refs, Ref{Kind: Header, Key: "Authorization", Value: "Bearer ${env:" + bearerVar + "}", Needs: []string{"environment variable " + bearerVar}})
	}
	if bearerToken != "" {
		if d.headers == nil {
			d.headers = map[string]string{}
		}
		d.headers["Authorization"] = "Bearer " + bearerToken
	}
	if r.m["oauth"] != nil {
		d.notes = append(d.notes, "Codex signs in to it with OAuth, which Deskhand does not do: give it a header instead")
	}
	return ""
}

func (d *definition) openCode(r *reader) string {
	typ := r.str("type")
	switch typ {
	case "local":
		cmd := r.list("command")
		d.env, d.dir = r.strMap("environment"), r.str("cwd")
		if r.err != nil {
			return ""
		}
		if len(cmd) == 0 {
			return "its command is empty"
		}
		d.command, d.args = cmd[0], cmd[1:]
	case "remote":
		d.url, d.headers = r.str("url"), r.strMap("headers")
		if oauth, ok := r.m["oauth"].(bool); !ok || oauth {
			if _, hasAuth := d.headers["Authorization"]; !hasAuth {
				d.notes = append(d.notes, "opencode may sign in to it with OAuth, which Deskhand does not do: give it an Authorization header if it needs one")
			}
		}
	case "":
		return "it has no type (opencode ignores such an entry)"
	default:
		return fmt.Sprintf("its type %q is not one Deskhand knows", typ)
	}
	return ""
}

func (d *definition) zed(r *reader) string {
	if _, ok := r.m["settings"]; ok && r.m["command"] == nil && r.m["url"] == nil {
		return "it is a Zed extension's server, which only Zed runs"
	}
	if src := r.str("source"); src == "extension" {
		return "it is a Zed extension's server, which only Zed runs"
	}
	if cmd, ok := r.m["command"].(map[string]any); ok { // {source: custom, command: {path, args, env}}
		sub := &reader{m: cmd}
		d.command, d.args, d.env = sub.str("path"), sub.list("args"), sub.strMap("env")
		if sub.err != nil {
			r.fail("command."+sub.err.(fieldError).key, sub.err.(fieldError).want)
		}
		return ""
	}
	d.command, d.args, d.env = r.str("command"), r.list("args"), r.strMap("env")
	d.url, d.headers = r.str("url"), r.strMap("headers")
	if r.err == nil && d.command != "" && d.url != "" {
		return "it has both a command and a url"
	}
	return ""
}

func (d *definition) goose(r *reader) string {
	typ := r.str("type")
	switch typ {
	case "stdio":
		d.command, d.args = r.str("cmd"), r.list("args")
	case "streamable_http":
		d.url, d.headers = r.str("uri"), r.strMap("headers")
	case "builtin", "platform", "frontend", "inline_python":
		return fmt.Sprintf("it is a Goose %s extension, which only Goose runs", typ)
	case "sse":
		return "it uses SSE, which Deskhand does not run (only stdio and Streamable HTTP)"
	case "":
		return "it has no type"
	default:
		return fmt.Sprintf("its type %q is not one Deskhand knows", typ)
	}
	d.env = r.strMap("envs")
	keys := r.list("env_keys")
	for _, k := range keys {
		d.refs = append(d.refs, Ref{Kind: EnvVar, Key: k, Needs: []string{"Goose's secret " + k + " (in its keyring or secrets.yaml)"}})
	}
	return ""
}

// server classifies d's values and makes it a FoundServer found at src.
func (d definition) server(src Source) FoundServer {
	s := FoundServer{
		Name: src.Name, Sources: []Source{src},
		Command: d.command, Args: d.args, Dir: d.dir, URL: d.url,
		Refs: d.refs, Notes: d.notes,
	}
	s.Env, s.Secrets, s.Refs = classify(EnvVar, d.env, d.inputs, s.Secrets, s.Refs)
	s.Headers, s.Secrets, s.Refs = classify(Header, d.headers, d.inputs, s.Secrets, s.Refs)
	for i, a := range s.Args {
		if secretValue(a) {
			s.SecretArgs = append(s.SecretArgs, i)
		}
	}
	if len(s.SecretArgs) > 0 {
		s.Notes = append(s.Notes, "some of its arguments look like secrets: move them to environment variables, which Deskhand keeps in the keychain")
	}
	if s.URL != "" && redactURL(s.URL) != s.URL {
		s.SecretURL = true
		s.Notes = append(s.Notes, "its URL carries what looks like a secret: move it to a header, which Deskhand keeps in the keychain")
	}
	for _, v := range append([]string{s.Command, s.Dir, s.URL}, s.Args...) {
		if refRE.MatchString(v) {
			s.Notes = append(s.Notes, "its command, arguments, folder or URL refer to variables (${…}) that the client fills in and Deskhand does not: replace them")
			break
		}
	}
	return s
}

// classify splits values into plain ones, secrets and references.
func classify(kind ValueKind, values map[string]string, inputs map[string]string, secrets []Secret, refs []Ref) (map[string]string, []Secret, []Ref) {
	var plain map[string]string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		if needs := references(v, inputs); len(needs) > 0 {
			refs = append(refs, Ref{Kind: kind, Key: k, Value: v, Needs: needs})
			continue
		}
		if v != "" && (secretName(kind, k) || secretValue(v)) {
			secrets = append(secrets, Secret{Kind: kind, Key: k, value: v})
			continue
		}
		if plain == nil {
			plain = map[string]string{}
		}
		plain[k] = v
	}
	return plain, secrets, refs
}

// refRE matches what clients fill in: ${env:X}, ${input:x}, ${X},
// ${workspaceFolder}, $X and opencode's {env:X} and {file:PATH}.
var refRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*):([^}]+)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\{file:([^}]+)\}`)

// references describes what the references in v need; nil when it has
// none.
func references(v string, inputs map[string]string) []string {
	var needs []string
	for _, m := range refRE.FindAllStringSubmatch(v, -1) {
		switch {
		case m[1] == "input":
			need := cmp.Or(inputs[m[2]], fmt.Sprintf("VS Code input %q", m[2]))
			needs = append(needs, need)
		case m[1] == "env":
			needs = append(needs, "environment variable "+m[2])
		case m[1] != "":
			needs = append(needs, fmt.Sprintf("the client's variable %s:%s", m[1], m[2]))
		case m[3] != "":
			needs = append(needs, "variable "+m[3])
		case m[4] != "":
			needs = append(needs, "environment variable "+m[4])
		case m[5] != "":
			needs = append(needs, "environment variable "+m[5])
		case m[6] != "":
			needs = append(needs, "the content of the file "+m[6])
		}
	}
	return needs
}

// secretHeaders are headers that always carry a secret.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key"}

var secretNameRE = regexp.MustCompile(`(?i)key|token|secret|password|passwd|auth|credential|session|cookie`)

func secretName(kind ValueKind, k string) bool {
	if kind == Header && slices.ContainsFunc(secretHeaders, func(h string) bool { return strings.EqualFold(h, k) }) {
		return true
	}
	return secretNameRE.MatchString(k)
}

func secretValue(v string) bool {
	if agent.LooksSecret(v) {
		return true
	}
	return looksLikeURL(v) && redactURL(v) != v
}

func looksLikeURL(s string) bool { return strings.Contains(s, "://") }

// redactArg hides a secret-looking argument.
func redactArg(a string) string {
	if looksLikeURL(a) {
		return redactURL(a)
	}
	if agent.LooksSecret(a) {
		return "[secret]"
	}
	return a
}

// redactURL hides a URL's password and the values of query parameters
// whose names or values look secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if agent.LooksSecret(s) {
			return "[secret]"
		}
		return s
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "secret")
		changed = true
	}
	q := u.Query()
	for k, vs := range q {
		for i, v := range vs {
			if secretNameRE.MatchString(k) || agent.LooksSecret(v) {
				vs[i], changed = "secret", true
			}
		}
	}
	if !changed {
		if agent.LooksSecret(s) {
			return "[secret]"
		}
		return s
	}
	u.RawQuery = q.Encode()
	return strings.ReplaceAll(u.String(), "secret", "[secret]")
}

// deskhands says why s is Deskhand's own entry; "" when it is not.
func deskhands(s FoundServer, opt ImportOptions) string {
	name := s.Sources[0].Name
	if strings.EqualFold(name, DefaultName) || slices.Contains(opt.Names, name) {
		return "it is Deskhand's own entry (by its name)"
	}
	if s.URL != "" {
		for _, own := range opt.URLs {
			if sameEndpoint(s.URL, own) {
				return "it is Deskhand's own entry (it points at Deskhand's address)"
			}
		}
		// A client token of Deskhand's (server/agent's tokens start dh_)
		// sent to this machine.
		if u, err := url.Parse(s.URL); err == nil && loopback(u.Hostname()) {
			for _, sec := range s.Secrets {
				if sec.Kind == Header && strings.HasPrefix(bearer(sec.value), "dh_") {
					return "it is Deskhand's own entry (it sends a Deskhand token to this machine)"
				}
			}
		}
	}
	if s.Command != "" && slices.Contains(s.Args, "stdio") {
		base := strings.ToLower(s.Command[strings.LastIndexAny(s.Command, `/\`)+1:])
		base = strings.TrimSuffix(base, ".exe")
		if base == "deskhand" || slices.ContainsFunc(opt.Commands, func(c string) bool { return filepath.Clean(c) == filepath.Clean(s.Command) }) {
			return "it is Deskhand's own entry (it runs deskhand stdio)"
		}
	}
	return ""
}

// sameEndpoint reports whether two URLs reach the same host and port, any
// loopback name counting as one.
func sameEndpoint(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || ua.Host == "" || ub.Host == "" {
		return false
	}
	host := func(u *url.URL) string {
		h := strings.ToLower(u.Hostname())
		if loopback(h) {
			h = "loopback"
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
		}
		return h + ":" + port
	}
	return host(ua) == host(ub)
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	host = strings.ToLower(host)
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// SanitizeName makes name a tool server's name: letters, digits, '_' and
// '-' (anything else becoming '-'), no "__", no '_' or '-' at either end,
// at most MaxServerName characters; "server" when nothing is left.
func SanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	out = strings.Trim(out, "_-")
	if len(out) > MaxServerName {
		out = strings.TrimRight(out[:MaxServerName], "_-")
	}
	if out == "" {
		return "server"
	}
	return out
}

// sameDefinition reports whether a and b run the same server.
func sameDefinition(a, b FoundServer) bool {
	return a.Command == b.Command && slices.Equal(a.Args, b.Args) && a.Dir == b.Dir && a.URL == b.URL
}

// merge names the servers, merges the duplicates and renames the clashes.
func merge(all []FoundServer) []FoundServer {
	var out []FoundServer
	byName := map[string][]int{} // base name → the servers of that base
	used := map[string]bool{}
	for _, s := range all {
		orig := s.Sources[0].Name
		base := SanitizeName(orig)
		if j := slices.IndexFunc(byName[base], func(i int) bool { return sameDefinition(out[i], s) }); j >= 0 {
			i := byName[base][j]
			if !maps.Equal(out[i].Env, s.Env) || !maps.Equal(out[i].Headers, s.Headers) || !sameSecrets(out[i].Secrets, s.Secrets) {
				out[i].Notes = append(out[i].Notes, fmt.Sprintf("%s gives it other environment variables or headers; those of %s are kept", s.Sources[0], out[i].Sources[0]))
			}
			out[i].Sources = append(out[i].Sources, s.Sources...)
			continue
		}
		name := base
		if used[name] {
			for n := 2; ; n++ {
				suffix := "-" + strconv.Itoa(n)
				name = strings.TrimRight(base[:min(len(base), MaxServerName-len(suffix))], "_-") + suffix
				if !used[name] {
					break
				}
			}
			s.Notes = append(s.Notes, fmt.Sprintf("renamed from %q to %s: another server of that name, defined otherwise, came first", orig, name))
		} else if name != orig {
			s.Notes = append(s.Notes, fmt.Sprintf("renamed from %q to %s: a tool server's name is at most %d letters, digits, '_' or '-', without \"__\"", orig, name, MaxServerName))
		}
		s.Name = name
		used[name] = true
		byName[base] = append(byName[base], len(out))
		out = append(out, s)
	}
	return out
}

func sameSecrets(a, b []Secret) bool {
	return slices.EqualFunc(a, b, func(x, y Secret) bool { return x == y })
}
