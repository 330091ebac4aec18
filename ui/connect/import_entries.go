package connect

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
)

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
