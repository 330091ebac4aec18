package connect

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Tokens issues and revokes the clients' tokens. main backs it with the
// running app's control channel, or with the store when the app is not
// running.
type Tokens interface {
	// Rotate returns a new token for the client named name, creating the
	// client when there is none; its earlier token stops working at once.
	Rotate(ctx context.Context, name string) (string, error)
	// Revoke stops the named client's token; agent.ErrNotFound when the
	// client has none.
	Revoke(ctx context.Context, name string) error
}

// SecretKey names a stdio client's token in the keychain, where
// `deskhand stdio --client ID` reads it.
func SecretKey(clientID string) string { return "client-token:" + clientID }

// Manager connects clients to one running Deskhand: it mints each client
// its own token, writes the entry, reads it back and verifies it with a
// real MCP handshake, as the client itself would.
type Manager struct {
	Env     Env
	URL     string        // Deskhand's MCP endpoint, as HTTP clients reach it
	Command string        // absolute path of the deskhand binary, for Claude Desktop's stdio entry
	Args    []string      // its arguments; StdioArgs when nil
	Tokens  Tokens        // mints and revokes tokens
	Secrets agent.Secrets // the keychain, where Claude Desktop's token lives
	Name    string        // entry name; DefaultName when empty
	Timeout time.Duration // bounds one verification; 20 s when zero
}

// Action is what Connect or Disconnect did to the client's file.
type Action int

// Actions.
const (
	NoAction   Action = iota // nothing written: already connected, or nothing to remove
	Wrote                    // the entry was written (with a new token)
	WouldWrite               // dry run: the entry would be written
	Removed                  // the entry was removed
)

// Report is what the Manager found and did for one client.
type Report struct {
	Client Client
	State  State  // the entry as read back from the file
	Check  Check  // its verification
	Action Action // what was done
	Result Result // the write, when there was one
	Hint   string // what the person still has to do in the client, if anything
}

// ConnectOptions change how Connect treats an entry that already works.
type ConnectOptions struct {
	Rotate bool // issue a new token even when the entry works
	DryRun bool // write nothing and mint nothing; report what would happen
}

// ErrNotInstalled is returned when connecting a client that does not
// appear to be installed.
var ErrNotInstalled = errors.New("does not seem to be installed")

func (m *Manager) args() []string { return Entry{Args: m.Args}.args() }

func (m *Manager) timeout() time.Duration {
	if m.Timeout == 0 {
		return 20 * time.Second
	}
	return m.Timeout
}

// TokenName is the name of the token Deskhand issues to client: its ID,
// plus the project folder for a project-scoped file, so that each file
// holds a token of its own.
func (m *Manager) TokenName(c Client) string {
	if m.Env.Project == "" {
		return c.ID
	}
	abs, err := filepath.Abs(m.Env.Project)
	if err != nil {
		abs = m.Env.Project
	}
	sum := sha256.Sum256([]byte(abs))
	base := filepath.Base(abs)
	if len(base) > 40 {
		base = base[:40]
	}
	return c.ID + "@" + base + "-" + hex.EncodeToString(sum[:3])
}

// Status reads client's entry back and verifies it.
func (m *Manager) Status(ctx context.Context, c Client) (Report, error) {
	st, err := Status(c, m.Env, m.Name)
	r := Report{Client: c, State: st}
	if err != nil || st.Condition != Connected {
		return r, err
	}
	r.Check = m.verify(ctx, c, st)
	if len(st.TurnedOffIn) > 0 {
		r.Hint = fmt.Sprintf("%s has it turned off in %s: /mcp enable %s there turns it back on.", c.Name, strings.Join(st.TurnedOffIn, ", "), cmp.Or(m.Name, DefaultName))
	}
	return r, nil
}

// verify checks the entry, then says what the client does with it: an
// entry that is broken is told first, since connecting again mends it;
// one that works but that the client turned off, or has yet to approve,
// is told as such.
func (m *Manager) verify(ctx context.Context, c Client, st State) Check {
	chk := m.verifyEntry(ctx, c, st)
	if chk.Health != Verified && chk.Health != NotRunning {
		return chk
	}
	switch {
	case st.Disabled != "":
		return Check{Health: Disabled, Detail: fmt.Sprintf("%s will not use it: %s; turn it on there", c.Name, st.Disabled)}
	case st.Pending != "" && chk.Health == Verified:
		return Check{Health: AwaitsApproval, Tools: chk.Tools, Detail: st.Pending}
	}
	return chk
}

// verifyEntry proves the entry as its client would use it.
func (m *Manager) verifyEntry(ctx context.Context, c Client, st State) Check {
	ctx, cancel := context.WithTimeout(ctx, m.timeout())
	defer cancel()
	if c.ID != ClaudeDesktop.ID {
		switch {
		case st.URL != m.URL:
			return Check{Health: Stale, Detail: fmt.Sprintf("the entry points at %s, but Deskhand serves at %s: connect it again", st.URL, m.URL)}
		case st.token == "":
			return Check{Health: NoToken, Detail: "the entry sends no token: connect it again"}
		}
		return verifyHTTP(ctx, st.URL, st.token)
	}
	if st.Command != m.Command || !slices.Equal(st.Args, m.args()) {
		return Check{Health: Stale, Detail: fmt.Sprintf("the entry runs %q %s, not %q %s: connect it again",
			st.Command, strings.Join(st.Args, " "), m.Command, strings.Join(m.args(), " "))}
	}
	if m.Secrets == nil {
		return Check{Health: Broken, Detail: "no keychain to read Claude Desktop's token from"}
	}
	token, err := m.Secrets.Get(SecretKey(c.ID))
	if errors.Is(err, agent.ErrNotFound) {
		return Check{Health: NoToken, Detail: "the keychain holds no token for Claude Desktop: connect it again"}
	}
	if err != nil {
		return Check{Health: Broken, Detail: "reading Claude Desktop's token from the keychain: " + agent.UserMessage(err)}
	}
	// Over HTTP first, which tells a stopped app from a refused token,
	// then as Claude Desktop does it: spawn the entry's command.
	if chk := verifyHTTP(ctx, m.URL, token); chk.Health != Verified {
		return chk
	}
	return verifyStdio(ctx, st.Command, st.Args, nil)
}

// Connect makes client's entry work: an entry that already verifies (or
// matches while Deskhand is stopped) is left alone, byte for byte;
// otherwise the client gets a new token, the entry is written, read back
// and verified. A file that does not parse is refused before any token
// is minted.
//
// The client's file stays locked from the first read to the last check,
// so that two Connects at once (two processes, or the CLI and the
// desktop) take turns: the second finds the entry the first wrote and
// verified, instead of rotating its token away from under it.
func (m *Manager) Connect(ctx context.Context, c Client, opts ConnectOptions) (Report, error) {
	if !opts.DryRun && Installed(c, m.Env) {
		unlock, err := lock(ctx, c, m.Env, true)
		if err != nil {
			return m.refused(c, err)
		}
		defer unlock()
	}
	r, err := m.Status(ctx, c)
	if err != nil {
		return r, err
	}
	if r.State.Condition == NotInstalled {
		return r, fmt.Errorf("%s %w (no %s): install it first", c.Name, ErrNotInstalled, filepath.Dir(r.State.Path))
	}
	// An entry the client turned off, or has yet to approve, works
	// (verify says so only then): it is left as the person left it.
	if !opts.Rotate && (r.Check.Health == Verified || r.Check.Health == NotRunning || r.Check.Health == Disabled || r.Check.Health == AwaitsApproval) {
		return m.refresh(c, r, opts.DryRun)
	}
	if opts.DryRun {
		r.Action = WouldWrite
		return r, nil
	}
	token, err := m.Tokens.Rotate(ctx, m.TokenName(c))
	if err != nil {
		return r, fmt.Errorf("issue a token for %s: %w", c.Name, err)
	}
	e := Entry{Name: m.Name, URL: m.URL, Token: token}
	if c.ID == ClaudeDesktop.ID {
		if m.Secrets == nil {
			return r, errors.New("connect: no keychain for Claude Desktop's token")
		}
		if err := m.Secrets.Set(SecretKey(c.ID), token); err != nil {
			return r, fmt.Errorf("keep Claude Desktop's token in the keychain: %w", err)
		}
		e = Entry{Name: m.Name, Command: m.Command, Args: m.Args}
	}
	r.Result, err = connectFile(c, m.Env, e)
	if err != nil {
		return r, fmt.Errorf("%w (the token it had before no longer works: fix this and connect it again)", err)
	}
	r.Action = Wrote
	back, err := m.Status(ctx, c)
	if err != nil {
		return r, fmt.Errorf("read back %s: %w", r.Result.Path, err)
	}
	r.State, r.Check = back.State, back.Check
	if r.State.Condition != Connected {
		r.Check = Check{Health: Broken, Detail: "the entry is gone from the file right after writing it: another program rewrote it"}
	}
	r.Hint = m.hint(c)
	return r, nil
}

// refresh brings an HTTP entry that verifies up to date with the token it
// has, when it lacks a field this Deskhand writes (the tool-call timeout
// of an entry written before there was one, say); an entry that is
// already what Connect would write is left alone, byte for byte.
func (m *Manager) refresh(c Client, r Report, dryRun bool) (Report, error) {
	if r.Check.Health != Verified || c.ID == ClaudeDesktop.ID || r.State.token == "" {
		return r, nil
	}
	e := Entry{Name: m.Name, URL: m.URL, Token: r.State.token}
	f, err := formatOf(c)
	if err != nil {
		return r, err
	}
	fl, err := open(r.State.Path, m.Env, f)
	if err != nil {
		return r, err
	}
	name, err := checkName(m.Name)
	if err != nil {
		return r, err
	}
	e.Name = name
	if _, same, err := f.set(r.State.Path, fl.data, name, e); err != nil || same {
		return r, err
	}
	if dryRun {
		r.Action = WouldWrite
		return r, nil
	}
	if r.Result, err = connectFile(c, m.Env, e); err != nil {
		return r, err
	}
	r.Action, r.Hint = Wrote, m.hint(c)
	return r, nil
}

// refused is the report of an edit refused before the file was read: its
// lock could not be had, or its path is unsafe.
func (m *Manager) refused(c Client, err error) (Report, error) {
	p, _ := Path(c, m.Env)
	return Report{Client: c, State: State{Path: p}}, err
}

// Disconnect removes client's entry and revokes its token (and, for
// Claude Desktop, forgets it in the keychain).
func (m *Manager) Disconnect(ctx context.Context, c Client) (Report, error) {
	unlock, err := lock(ctx, c, m.Env, false)
	if err != nil {
		return m.refused(c, err)
	}
	defer unlock()
	res, err := disconnectFile(c, m.Env, m.Name)
	r := Report{Client: c, Result: res, State: State{Path: res.Path, Condition: NotConnected}}
	if err != nil {
		return r, err
	}
	if res.Changed {
		r.Action = Removed
		r.Hint = removeHints[c.ID]
	}
	if err := m.Tokens.Revoke(ctx, m.TokenName(c)); err != nil && !errors.Is(err, agent.ErrNotFound) {
		return r, fmt.Errorf("revoke %s's token: %w", c.Name, err)
	}
	if c.ID == ClaudeDesktop.ID && m.Secrets != nil {
		if err := m.Secrets.Delete(SecretKey(c.ID)); err != nil && !errors.Is(err, agent.ErrNotFound) {
			return r, fmt.Errorf("forget Claude Desktop's token in the keychain: %w", err)
		}
	}
	return r, nil
}

// Preview is client's entry as Connect would write it, with the token
// replaced by a placeholder: shown to the person before any write.
func (m *Manager) Preview(c Client) (string, error) {
	name, err := checkName(m.Name)
	if err != nil {
		return "", err
	}
	e := Entry{Name: name, URL: m.URL, Token: "<a new token for " + m.TokenName(c) + ">", Command: m.Command, Args: m.Args}
	f, err := formatOf(c)
	if err != nil {
		return "", err
	}
	switch f.(type) {
	case tomlFormat:
		return tomlBlock("\n", name, e), nil
	case yamlFormat:
		return yamlServers + ":\n" + yamlBlock("\n", "  ", "  ", name, e), nil
	}
	jf := f.(jsonFormat)
	out, err := marshal(map[string]any{jf.key: map[string]any{name: jf.shape.entry(e)}}, "  ")
	return string(out), err
}

// marshal is json.Marshal (indented when indent is set) without escaping
// <, > and &, which people read.
func marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Link returns client's install deeplink (Cursor and VS Code have them)
// and the JSON it carries. The link holds a token: the entry's current one
// when it verifies, else a new one. Writing the file (Connect) keeps the
// token off every command line, which opening a link cannot.
func (m *Manager) Link(ctx context.Context, c Client) (link, config string, err error) {
	if c.ID != Cursor.ID && c.ID != VSCode.ID {
		return "", "", fmt.Errorf("%s has no install link: use 'deskhand connect %s'", c.Name, c.ID)
	}
	unlock, err := lock(ctx, c, m.Env, false)
	if err != nil {
		return "", "", err
	}
	defer unlock()
	r, err := m.Status(ctx, c)
	if err != nil {
		return "", "", err
	}
	// The entry's own token while it works (or may: Deskhand is stopped),
	// so that the file keeps working.
	token := r.State.token
	if r.Check.Health != Verified && r.Check.Health != NotRunning {
		if token, err = m.Tokens.Rotate(ctx, m.TokenName(c)); err != nil {
			return "", "", fmt.Errorf("issue a token for %s: %w", c.Name, err)
		}
	}
	name, err := checkName(m.Name)
	if err != nil {
		return "", "", err
	}
	return Deeplink(c, name, m.URL, token)
}

// LinkPreview is what Link would carry, built without minting anything:
// the JSON with a placeholder where the token goes, and whether Link
// would issue the client a new token (its entry does not work) rather
// than reuse the one its file holds. Shown to the person before Link,
// so that a cancelled link leaves no token behind.
func (m *Manager) LinkPreview(ctx context.Context, c Client) (config string, newToken bool, err error) {
	if c.ID != Cursor.ID && c.ID != VSCode.ID {
		return "", false, fmt.Errorf("%s has no install link: use 'deskhand connect %s'", c.Name, c.ID)
	}
	unlock, err := lock(ctx, c, m.Env, false)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	r, err := m.Status(ctx, c)
	if err != nil {
		return "", false, err
	}
	placeholder := "<the token its file holds now>"
	if r.Check.Health != Verified && r.Check.Health != NotRunning {
		placeholder, newToken = "<a new token for "+m.TokenName(c)+">", true
	}
	name, err := checkName(m.Name)
	if err != nil {
		return "", false, err
	}
	_, config, err = Deeplink(c, name, m.URL, placeholder)
	return config, newToken, err
}

// Deeplink builds client's install link for an HTTP entry.
func Deeplink(c Client, name, endpoint, token string) (link, config string, err error) {
	headers := map[string]string{"Authorization": "Bearer " + token}
	switch c.ID {
	case Cursor.ID:
		raw, err := marshal(jsonEntry{URL: endpoint, Headers: headers}, "")
		if err != nil {
			return "", "", err
		}
		q := url.Values{"name": {name}, "config": {base64.StdEncoding.EncodeToString(raw)}}
		return "cursor://anysphere.cursor-deeplink/mcp/install?" + q.Encode(), string(raw), nil
	case VSCode.ID:
		raw, err := marshal(struct {
			Name string `json:"name"`
			jsonEntry
		}{name, jsonEntry{Type: "http", URL: endpoint, Headers: headers}}, "")
		if err != nil {
			return "", "", err
		}
		// encodeURIComponent: QueryEscape, with %20 rather than '+'.
		return "vscode:mcp/install?" + strings.ReplaceAll(url.QueryEscape(string(raw)), "+", "%20"), string(raw), nil
	}
	return "", "", fmt.Errorf("%s has no install link", c.Name)
}

// connectHints say what a client needs before it uses a new entry.
var connectHints = map[string]string{
	Cursor.ID:        "Cursor loads it by itself; if Deskhand is not listed in Settings → MCP, restart Cursor.",
	ClaudeCode.ID:    "Start a new Claude Code session (or run /mcp) to use it.",
	VSCode.ID:        "In VS Code, run 'MCP: List Servers' and start deskhand; VS Code asks you to trust it the first time.",
	Windsurf.ID:      "In Windsurf, press Refresh in Cascade's MCP servers panel.",
	Codex.ID:         "Start a new Codex session to use it.",
	ClaudeDesktop.ID: "Quit Claude Desktop completely and start it again to load the entry.",
	Gemini.ID:        "Start a new Gemini CLI session (or run /mcp refresh) to use it; Gemini CLI starts MCP servers only in folders you trust.",
	Qwen.ID:          "Start a new Qwen Code session to use it.",
	OpenCode.ID:      "Start a new opencode session to use it.",
	Zed.ID:           "Zed loads it by itself: the dot beside deskhand in the Agent panel's settings turns green.",
	LMStudio.ID:      "LM Studio loads it by itself; if deskhand is not in its Program tab, restart LM Studio.",
	Goose.ID:         "Start a new Goose session to use it; quit Goose Desktop first if it is open, since it rewrites config.yaml.",
}

// removeHints say what a client needs before it forgets a removed entry.
var removeHints = map[string]string{
	ClaudeDesktop.ID: "Quit Claude Desktop completely and start it again.",
	Codex.ID:         "Running Codex sessions keep the old entry until they end.",
}

func (m *Manager) hint(c Client) string {
	h := connectHints[c.ID]
	if m.Env.Project != "" {
		p, _ := Path(c, m.Env)
		base := filepath.Base(p)
		h += fmt.Sprintf(" The project file holds a token: keep %s and %s.deskhand-* (its backups and lock) out of version control (add them to .gitignore).", base, base)
		switch c.ID {
		case ClaudeCode.ID:
			h += " Claude Code asks you to approve servers from .mcp.json the first time."
		case Qwen.ID:
			h += " Qwen Code reads a project's settings only once you trust the folder, and runs its servers once you approve each (qwen mcp approve deskhand), again after each new token."
		case Gemini.ID, Zed.ID:
			h += fmt.Sprintf(" %s reads a project's settings only once you trust the folder.", c.Name)
		}
	}
	return h
}

// CoreClients is what ClientTokens asks of the core: its clients' tokens.
type CoreClients interface {
	Rotate(ctx context.Context, name string) (agent.Client, string, error)
	Revoke(ctx context.Context, name string) error
}

// ClientTokens are the core's clients as the Tokens a Manager mints and
// revokes, for a core in this process.
type ClientTokens struct{ Clients CoreClients }

// Rotate implements Tokens.
func (t ClientTokens) Rotate(ctx context.Context, name string) (string, error) {
	_, token, err := t.Clients.Rotate(ctx, name)
	return token, err
}

// Revoke implements Tokens.
func (t ClientTokens) Revoke(ctx context.Context, name string) error {
	return t.Clients.Revoke(ctx, name)
}
