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
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
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
