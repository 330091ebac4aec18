// Package connect writes, reads back and removes Deskhand's entry in the
// configuration files of MCP clients (Cursor, Claude Code, VS Code, Windsurf,
// Codex, Claude Desktop, Gemini CLI, Qwen Code, opencode, Zed, LM Studio and
// Goose).
//
// The clients added for issue 18, each file and entry from the client's own
// documentation or source (none yet proven against the client itself):
//
//   - Gemini CLI: ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini), project
//     .gemini/settings.json; mcpServers.NAME {httpUrl, headers, timeout (ms)}.
//     httpUrl is Streamable HTTP in every version (a bare url was SSE in older
//     ones); timeout bounds each tool call, default 600000.
//     (google-gemini/gemini-cli docs/tools/mcp-server.md,
//     packages/core/src/tools/mcp-client.ts)
//   - Qwen Code: ~/.qwen/settings.json, project .qwen/settings.json; the same
//     entry (Qwen's url is SSE). (QwenLM/qwen-code
//     docs/users/features/mcp.md; timeout honoured per server since
//     QwenLM/qwen-code#574)
//   - opencode: opencode.json, or opencode.jsonc when only that exists, in
//     $XDG_CONFIG_HOME/opencode (~/.config/opencode on every system) or the
//     project folder; mcp.NAME {type: "remote", url, headers, enabled: true,
//     oauth: false}, the V1 shape V2 still reads; oauth false, or opencode
//     tries OAuth. No timeout: V1's is the tool-listing wait, V2's an object.
//     (opencode.ai/docs/mcp-servers, opencode.ai/docs/migrate-v1)
//   - Zed: ~/.config/zed/settings.json ($XDG_CONFIG_HOME/zed on Linux,
//     %APPDATA%\Zed on Windows), project .zed/settings.json, JSON with
//     comments; context_servers.NAME {url, headers, timeout (s)}, the tool-call
//     timeout, else context_server_timeout, 60. (zed.dev/docs/ai/mcp,
//     zed.dev/docs/configuring-zed, crates/settings_content/src/project.rs)
//   - LM Studio: ~/.lmstudio/mcp.json (%USERPROFILE%\.lmstudio on Windows);
//     Cursor's mcpServers.NAME {url, headers}; no timeout setting.
//     (lmstudio.ai/docs/app/mcp; the path as LM Studio's docs give it, quoted
//     in lmstudio-ai/lmstudio-bug-tracker#1371; timeout: #727)
//   - Goose: ~/.config/goose/config.yaml ($XDG_CONFIG_HOME/goose),
//     %APPDATA%\Block\goose\config\config.yaml on Windows; extensions.NAME
//     {enabled, type: streamable_http, name, description, uri, headers, envs,
//     env_keys, timeout (s), available_tools}, default timeout 300.
//     (block/goose documentation/docs/guides/config-files.md,
//     crates/goose/src/agents/extension.rs, config/extensions.rs)
//
// Every client here takes a URL and headers, so none needs the stdio bridge
// (only Claude Desktop does). Where a client has a per-server tool-call
// timeout (Gemini CLI, Qwen Code, Zed, Goose, and Codex's tool_timeout_sec),
// the entry sets it to CallTimeout.
//
// Every edit follows the same rules: a file too large or too deeply nested
// is refused before it is parsed (LimitError); the file is parsed strictly
// and refused (left untouched) when it does not parse; only our entry is
// changed and the rest of the file is kept byte-for-byte (other servers,
// comments, key order, line endings); an edit that would not change our
// entry writes nothing; the previous file is backed up next to it (the last
// five backups are kept); and the new file is written to a temporary file in
// the same folder, synced and renamed into place, with mode 0600 when it
// holds a token. Each edit holds an advisory lock on a file beside the
// configuration file (NAME.deskhand-lock) from reading to writing, so that
// Deskhands editing one file at once take turns (LockError when the wait is
// too long).
//
// A file that is a link (or lies in a linked folder) is edited where it
// leads, and the link kept, but only when that is a regular file; in a
// project folder (Env.Project), a link that leads out of the project is
// refused (UnsafePathError), since a repository can plant one.
//
// Paths are resolved from an Env so that callers (and tests) can point the
// package at any home folder and operating system.
//
// Claude Desktop also installs Deskhand as an extension: WriteExtension
// writes a .mcpb bundle, a ZIP with manifest.json (manifest version 0.3)
// at its root and the deskhand program under server/, started with the
// same stdio arguments as the config-file entry. The format is
// modelcontextprotocol/mcpb's MANIFEST.md and
// schemas/mcpb-manifest-v0.3.schema.json at commit 27083dc; the launch
// command is computed as its src/shared/config.ts getMcpConfigForManifest
// does (${__dirname} is the folder the bundle is unpacked into), and its
// src/cli/unpack.ts restores the Unix modes stored in the ZIP.
package connect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// DefaultName is the entry name used when Entry.Name is empty.
const DefaultName = "deskhand"

// Client identifies an MCP client whose configuration we can edit.
type Client struct {
	ID   string // stable identifier, e.g. "cursor"
	Name string // human-readable name, e.g. "Cursor"
}

// The supported clients.
var (
	Cursor        = Client{ID: "cursor", Name: "Cursor"}
	ClaudeCode    = Client{ID: "claude-code", Name: "Claude Code"}
	VSCode        = Client{ID: "vscode", Name: "VS Code"}
	Windsurf      = Client{ID: "windsurf", Name: "Windsurf"}
	Codex         = Client{ID: "codex", Name: "Codex"}
	ClaudeDesktop = Client{ID: "claude-desktop", Name: "Claude Desktop"}
	Gemini        = Client{ID: "gemini", Name: "Gemini CLI"}
	Qwen          = Client{ID: "qwen", Name: "Qwen Code"}
	OpenCode      = Client{ID: "opencode", Name: "opencode"}
	Zed           = Client{ID: "zed", Name: "Zed"}
	LMStudio      = Client{ID: "lmstudio", Name: "LM Studio"}
	Goose         = Client{ID: "goose", Name: "Goose"}
)

// Clients returns every supported client, in display order.
func Clients() []Client {
	return []Client{Cursor, ClaudeCode, VSCode, Windsurf, Codex, ClaudeDesktop, Gemini, Qwen, OpenCode, Zed, LMStudio, Goose}
}

// CallTimeout is the tool-call timeout written for the clients that have a
// per-server setting (Gemini CLI, Qwen Code, Zed, Codex, Goose): a minute
// more than Deskhand's question timeout, so that a turn waiting for the
// user's answer ends on Deskhand's side, with an answer, before the client
// gives up on the call.
const CallTimeout = agent.DefaultQuestionTimeout + time.Minute

// Lookup returns the client with the given ID.
func Lookup(id string) (Client, bool) {
	for _, c := range Clients() {
		if c.ID == id {
			return c, true
		}
	}
	return Client{}, false
}

// Env is where the package looks for configuration files. Empty fields are
// derived from Home and Getenv; see DefaultEnv for the real machine.
type Env struct {
	OS           string              // "linux", "darwin" or "windows"; runtime.GOOS when empty
	Home         string              // user home folder (%USERPROFILE% on Windows); required
	Getenv       func(string) string // environment lookup (CODEX_HOME, XDG_CONFIG_HOME, …); may be nil
	ConfigDir    string              // Linux config root; default $XDG_CONFIG_HOME or Home/.config
	AppData      string              // Windows %APPDATA%; default Home/AppData/Roaming
	LocalAppData string              // Windows %LOCALAPPDATA%; default Home/AppData/Local
	Now          func() time.Time    // clock for backup names; time.Now when nil
	// LockWait bounds the wait for another Deskhand editing the same file
	// (see LockError); 2 minutes when zero.
	LockWait time.Duration
	// Project, when set, is a project folder: Cursor, Claude Code, VS Code,
	// Gemini CLI, Qwen Code, opencode and Zed then use their project files
	// there (.cursor/mcp.json, .mcp.json, .vscode/mcp.json,
	// .gemini/settings.json, .qwen/settings.json, opencode.json[c],
	// .zed/settings.json); the other clients have no project scope.
	Project string
}

// DefaultEnv describes the current user on the current machine.
func DefaultEnv() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, err
	}
	return Env{
		OS:           runtime.GOOS,
		Home:         home,
		Getenv:       os.Getenv,
		AppData:      os.Getenv("APPDATA"),
		LocalAppData: os.Getenv("LOCALAPPDATA"),
	}, nil
}

func (e Env) os() string {
	if e.OS == "" {
		return runtime.GOOS
	}
	return e.OS
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

func (e Env) configDir() string {
	if e.ConfigDir != "" {
		return e.ConfigDir
	}
	if x := e.getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(e.Home, ".config")
}

func (e Env) appData() string {
	if e.AppData != "" {
		return e.AppData
	}
	if x := e.getenv("APPDATA"); x != "" {
		return x
	}
	return filepath.Join(e.Home, "AppData", "Roaming")
}

func (e Env) localAppData() string {
	if e.LocalAppData != "" {
		return e.LocalAppData
	}
	if x := e.getenv("LOCALAPPDATA"); x != "" {
		return x
	}
	return filepath.Join(e.Home, "AppData", "Local")
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Entry is the server entry we write.
type Entry struct {
	Name    string   // entry name; DefaultName when empty; letters, digits, '_' and '-' only
	URL     string   // Streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp (HTTP clients)
	Token   string   // bearer token sent as "Authorization: Bearer TOKEN"; optional
	Command string   // absolute path of our binary (Claude Desktop, which gets a stdio entry)
	Args    []string // the command's arguments; StdioArgs when nil
}

// StdioArgs are the arguments written for the Claude Desktop stdio entry.
var StdioArgs = []string{"stdio", "--client", ClaudeDesktop.ID}

func (e Entry) args() []string {
	if e.Args == nil {
		return StdioArgs
	}
	return e.Args
}

// Result describes what Connect or Disconnect did.
type Result struct {
	Path    string // the configuration file
	Real    string // the file written, when Path is a link or lies in a linked folder
	Changed bool   // false when the file already held the wanted state (nothing written)
	Created bool   // the file did not exist before
	Backup  string // the backup of the previous file, if one was written
}

// Condition is the coarse state of our entry in a client.
type Condition int

// Conditions reported by Status.
const (
	NotInstalled Condition = iota // the client's config folder does not exist
	NotConnected                  // installed, but our entry is absent
	Connected                     // our entry is present
)

func (c Condition) String() string {
	switch c {
	case NotInstalled:
		return "not installed"
	case NotConnected:
		return "not connected"
	case Connected:
		return "connected"
	}
	return fmt.Sprintf("Condition(%d)", int(c))
}

// State is our entry as read back from a client's configuration file.
type State struct {
	Condition Condition
	Path      string   // the configuration file
	Real      string   // the file read, when Path is a link or lies in a linked folder
	URL       string   // the URL the entry points at (HTTP clients)
	Command   string   // the command it runs (stdio entries)
	Args      []string // the command's arguments (stdio entries)
	HasToken  bool     // an Authorization header is present
	// Disabled says why the client will not use the entry although it is
	// there (its own switch, the client's exclude list); "" when nothing
	// turns it off.
	Disabled string
	// Pending says what the person must approve in the client before it
	// uses the entry (Claude Code and a project's .mcp.json); "" when
	// nothing.
	Pending string
	// TurnedOffIn lists the project folders where the client turned this
	// user-level entry off (Claude Code's /mcp disable).
	TurnedOffIn []string

	token string // the bearer token in the entry, for verification; never shown
}

// ParseError reports a configuration file that does not parse; the file is
// never modified when this error is returned.
type ParseError struct {
	Path   string
	Format string // "JSON", "JSONC", "TOML" or "YAML"
	Err    error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s is not valid %s, left untouched: %v", e.Path, e.Format, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ErrUnknownClient is returned for a Client this package does not know.
var ErrUnknownClient = errors.New("connect: unknown client")

// ErrNoProjectScope is returned for a project folder (Env.Project) with a
// client that only has a user-level configuration.
var ErrNoProjectScope = errors.New("has no project configuration")

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func checkName(name string) (string, error) {
	if name == "" {
		name = DefaultName
	}
	if !nameRE.MatchString(name) {
		return "", fmt.Errorf("connect: entry name %q: use only letters, digits, '_' and '-'", name)
	}
	return name, nil
}

// Path returns the user-level configuration file of client.
func Path(c Client, env Env) (string, error) {
	if env.Home == "" {
		return "", errors.New("connect: Env.Home is empty")
	}
	if env.Project != "" {
		return projectPath(c, env.Project)
	}
	h := env.Home
	switch c.ID {
	case Cursor.ID:
		return filepath.Join(h, ".cursor", "mcp.json"), nil
	case ClaudeCode.ID:
		return filepath.Join(h, ".claude.json"), nil
	case VSCode.ID:
		switch env.os() {
		case "darwin":
			return filepath.Join(h, "Library", "Application Support", "Code", "User", "mcp.json"), nil
		case "windows":
			return filepath.Join(env.appData(), "Code", "User", "mcp.json"), nil
		default:
			return filepath.Join(env.configDir(), "Code", "User", "mcp.json"), nil
		}
	case Windsurf.ID:
		return filepath.Join(h, ".codeium", "windsurf", "mcp_config.json"), nil
	case Codex.ID:
		return filepath.Join(codexHome(env), "config.toml"), nil
	case ClaudeDesktop.ID:
		return filepath.Join(claudeDesktopDir(env), "claude_desktop_config.json"), nil
	case Gemini.ID:
		root := h
		if x := env.getenv("GEMINI_CLI_HOME"); x != "" {
			root = x
		}
		return filepath.Join(root, ".gemini", "settings.json"), nil
	case Qwen.ID:
		return filepath.Join(qwenHome(env), "settings.json"), nil
	case OpenCode.ID:
		// xdg-basedir: $XDG_CONFIG_HOME or ~/.config on every system.
		return openCodeFile(filepath.Join(env.configDir(), "opencode")), nil
	case Zed.ID:
		if env.os() == "windows" {
			return filepath.Join(env.appData(), "Zed", "settings.json"), nil
		}
		return filepath.Join(env.configDir(), "zed", "settings.json"), nil
	case LMStudio.ID:
		return filepath.Join(h, ".lmstudio", "mcp.json"), nil
	case Goose.ID:
		// etcetera's app strategy: XDG on Linux and macOS, the roaming
		// AppData of author "Block" on Windows.
		if env.os() == "windows" {
			return filepath.Join(env.appData(), "Block", "goose", "config", "config.yaml"), nil
		}
		return filepath.Join(env.configDir(), "goose", "config.yaml"), nil
	}
	return "", fmt.Errorf("%w %q", ErrUnknownClient, c.ID)
}

// openCodeFile is opencode.jsonc in dir when only that one exists, else
// opencode.json.
func openCodeFile(dir string) string {
	json, jsonc := filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")
	if !exists(json) && exists(jsonc) {
		return jsonc
	}
	return json
}

// projectPath is client's configuration file in the project folder dir.
func projectPath(c Client, dir string) (string, error) {
	switch c.ID {
	case Cursor.ID:
		return filepath.Join(dir, ".cursor", "mcp.json"), nil
	case ClaudeCode.ID:
		return filepath.Join(dir, ".mcp.json"), nil
	case VSCode.ID:
		return filepath.Join(dir, ".vscode", "mcp.json"), nil
	case Gemini.ID:
		return filepath.Join(dir, ".gemini", "settings.json"), nil
	case Qwen.ID:
		return filepath.Join(dir, ".qwen", "settings.json"), nil
	case OpenCode.ID:
		return openCodeFile(dir), nil
	case Zed.ID:
		return filepath.Join(dir, ".zed", "settings.json"), nil
	case Windsurf.ID, Codex.ID, ClaudeDesktop.ID, LMStudio.ID, Goose.ID:
		return "", fmt.Errorf("connect: %s %w: connect it without a project folder", c.Name, ErrNoProjectScope)
	}
	return "", fmt.Errorf("%w %q", ErrUnknownClient, c.ID)
}

// qwenHome is Qwen Code's own folder: $QWEN_HOME, else ~/.qwen.
func qwenHome(env Env) string {
	if x := env.getenv("QWEN_HOME"); x != "" && filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(env.Home, ".qwen")
}

func codexHome(env Env) string {
	if x := env.getenv("CODEX_HOME"); x != "" {
		return x
	}
	return filepath.Join(env.Home, ".codex")
}

// msixPackage is the package folder of the Microsoft Store (MSIX) build of
// Claude Desktop, which redirects %APPDATA% into its LocalCache.
const msixPackage = "Claude_pzs8sxrjxfjjc"

func claudeDesktopDir(env Env) string {
	switch env.os() {
	case "darwin":
		return filepath.Join(env.Home, "Library", "Application Support", "Claude")
	case "windows":
		pkg := filepath.Join(env.localAppData(), "Packages", msixPackage)
		if isDir(pkg) {
			return filepath.Join(pkg, "LocalCache", "Roaming", "Claude")
		}
		return filepath.Join(env.appData(), "Claude")
	default:
		return filepath.Join(env.configDir(), "Claude")
	}
}

// Installed reports whether client appears to be installed: its
// configuration folder (or, for Claude Code, ~/.claude.json) exists.
func Installed(c Client, env Env) bool {
	p, err := Path(c, env)
	if err != nil {
		return false
	}
	if env.Project != "" {
		return isDir(env.Project)
	}
	switch c.ID {
	case ClaudeCode.ID:
		return exists(p) || isDir(filepath.Join(env.Home, ".claude"))
	case VSCode.ID:
		// …/Code/User/mcp.json: the Code folder exists once VS Code has run.
		return isDir(filepath.Dir(filepath.Dir(p)))
	case ClaudeDesktop.ID:
		if env.os() == "windows" && isDir(filepath.Join(env.localAppData(), "Packages", msixPackage)) {
			return true
		}
	}
	return isDir(filepath.Dir(p))
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// format is the file-format specific half of an edit.
type format interface {
	// set returns the new content with our entry set to e; same reports
	// that the existing entry is already exactly e.
	set(path string, data []byte, name string, e Entry) (out []byte, same bool, err error)
	// remove returns the content without our entry; found reports whether
	// there was one.
	remove(path string, data []byte, name string) (out []byte, found bool, err error)
	// read returns our entry as found in data.
	read(path string, data []byte, name string) (st State, found bool, err error)
	// sizeLimit is the largest file the format reads.
	sizeLimit() int64
}

func formatOf(c Client) (format, error) {
	switch c.ID {
	case Cursor.ID:
		return jsonFormat{key: "mcpServers", shape: shapeCursor}, nil
	case ClaudeCode.ID:
		return jsonFormat{key: "mcpServers", shape: shapeTypedHTTP, maxSize: maxSizeClaudeCode}, nil
	case VSCode.ID:
		return jsonFormat{key: "servers", shape: shapeTypedHTTP, jsonc: true}, nil
	case Windsurf.ID:
		return jsonFormat{key: "mcpServers", shape: shapeWindsurf}, nil
	case ClaudeDesktop.ID:
		return jsonFormat{key: "mcpServers", shape: shapeStdio}, nil
	case Codex.ID:
		return tomlFormat{}, nil
	case Gemini.ID, Qwen.ID:
		return jsonFormat{key: "mcpServers", shape: shapeGemini, jsonc: true}, nil
	case OpenCode.ID:
		return jsonFormat{key: "mcp", shape: shapeOpenCode, jsonc: true}, nil
	case Zed.ID:
		return jsonFormat{key: "context_servers", shape: shapeZed, jsonc: true}, nil
	case LMStudio.ID:
		return jsonFormat{key: "mcpServers", shape: shapeCursor}, nil
	case Goose.ID:
		return yamlFormat{}, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownClient, c.ID)
}

func validate(c Client, env Env, e Entry) (Entry, error) {
	name, err := checkName(e.Name)
	if err != nil {
		return e, err
	}
	e.Name = name
	if strings.ContainsAny(e.Token, "\r\n") {
		return e, errors.New("connect: token contains a line break")
	}
	if c.ID == ClaudeDesktop.ID {
		if !isAbs(env.os(), e.Command) {
			return e, fmt.Errorf("connect: %s needs the absolute path of the deskhand binary, got %q", c.Name, e.Command)
		}
		return e, nil
	}
	if !strings.HasPrefix(e.URL, "http://") && !strings.HasPrefix(e.URL, "https://") {
		return e, fmt.Errorf("connect: %s needs an http(s) URL, got %q", c.Name, e.URL)
	}
	return e, nil
}

func isAbs(goos, p string) bool {
	if goos == "windows" {
		if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
			r := p[0] | 0x20
			return r >= 'a' && r <= 'z'
		}
		return strings.HasPrefix(p, `\\`)
	}
	return strings.HasPrefix(p, "/")
}

// Connect writes (or replaces) our entry in client's configuration file,
// creating the folder and file when missing. It holds the file's lock
// while it reads and writes it, waiting for another Deskhand editing it.
func Connect(c Client, env Env, e Entry) (Result, error) {
	if _, err := formatOf(c); err != nil {
		return Result{}, err
	}
	if _, err := validate(c, env, e); err != nil {
		return Result{}, err
	}
	unlock, err := lock(context.Background(), c, env, true)
	if err != nil {
		p, _ := Path(c, env)
		return Result{Path: p}, err
	}
	defer unlock()
	return connectFile(c, env, e)
}

// connectFile is Connect, with the file's lock held by the caller.
func connectFile(c Client, env Env, e Entry) (Result, error) {
	f, err := formatOf(c)
	if err != nil {
		return Result{}, err
	}
	e, err = validate(c, env, e)
	if err != nil {
		return Result{}, err
	}
	p, err := Path(c, env)
	if err != nil {
		return Result{}, err
	}
	fl, err := open(p, env, f)
	if err != nil {
		return Result{Path: p}, err
	}
	out, same, err := f.set(p, fl.data, e.Name, e)
	if err != nil {
		return Result{Path: p, Real: fl.through()}, err
	}
	res := Result{Path: p, Real: fl.through(), Created: !fl.existed}
	if same && fl.existed {
		return res, nil
	}
	res.Backup, err = commit(env, fl, out, e.Token != "")
	if err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// locate finds the client's file format, our entry's name and the file.
func locate(c Client, env Env, name string) (format, string, string, error) {
	f, err := formatOf(c)
	if err != nil {
		return nil, "", "", err
	}
	if name, err = checkName(name); err != nil {
		return nil, "", "", err
	}
	p, err := Path(c, env)
	return f, name, p, err
}

// Disconnect removes our entry (named name, DefaultName when empty) from
// client's configuration file, holding its lock (see Connect). A missing
// file or entry is not an error.
func Disconnect(c Client, env Env, name string) (Result, error) {
	unlock, err := lock(context.Background(), c, env, false)
	if err != nil {
		p, _ := Path(c, env)
		return Result{Path: p}, err
	}
	defer unlock()
	return disconnectFile(c, env, name)
}

// disconnectFile is Disconnect, with the file's lock held by the caller.
func disconnectFile(c Client, env Env, name string) (Result, error) {
	f, name, p, err := locate(c, env, name)
	if err != nil {
		return Result{}, err
	}
	fl, err := open(p, env, f)
	res := Result{Path: p, Real: fl.through()}
	if err != nil || !fl.existed {
		return res, err
	}
	out, found, err := f.remove(p, fl.data, name)
	if err != nil || !found {
		return res, err
	}
	res.Backup, err = commit(env, fl, out, false)
	if err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// Status reads our entry (named name, DefaultName when empty) back from
// client's configuration file.
func Status(c Client, env Env, name string) (State, error) {
	f, name, p, err := locate(c, env, name)
	if err != nil {
		return State{}, err
	}
	st := State{Path: p, Condition: NotConnected}
	if !Installed(c, env) {
		st.Condition = NotInstalled
	}
	fl, err := open(p, env, f)
	st.Real = fl.through()
	if err != nil || !fl.existed {
		return st, err
	}
	got, found, err := f.read(p, fl.data, name)
	if err != nil {
		return st, err
	}
	if found {
		got.Path, got.Real = p, st.Real
		got.Condition = Connected
		got.Disabled = disabledIn(c, fl.data, name)
		out := stateOutside(c, env, fl.data, name)
		got.Disabled = cmp.Or(got.Disabled, out.disabled)
		got.Pending, got.TurnedOffIn = out.pending, out.offIn
		return got, nil
	}
	return st, nil
}

// bearer is the token in an Authorization header's value.
func bearer(header string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
