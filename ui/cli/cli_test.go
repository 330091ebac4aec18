package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/connect"
)

var errNotWired = errors.New("not wired in this test")

// calls records what the commands asked main's parts to do.
type calls struct {
	ran    []string  // "serve", "desktop", "stdio", "open"
	g      []Globals // the globals each was given
	client []string  // the client each stdio was given
}

// fakeEnv is an Env whose parts only record that they were called; data is
// a folder where no app runs, so commands do not reach one.
func fakeEnv(t *testing.T, vars map[string]string) (Env, *calls) {
	t.Helper()
	c := &calls{}
	record := func(what string, g Globals) { c.ran = append(c.ran, what); c.g = append(c.g, g) }
	return Env{
		Version: "test", DefaultDataDir: t.TempDir(), DefaultAddr: "127.0.0.1:7345", EndpointPath: "/mcp",
		Getenv:     func(k string) string { return vars[k] },
		Executable: func() (string, error) { return "/usr/bin/deskhand", nil },
		Desktop:    func(_ context.Context, g Globals, _ io.Writer) error { record("desktop", g); return nil },
		Serve:      func(_ context.Context, g Globals, _ io.Writer) error { record("serve", g); return nil },
		ServeStdio: func(_ context.Context, g Globals, client string, _ io.Reader, _, _ io.Writer) error {
			record("stdio", g)
			c.client = append(c.client, client)
			return nil
		},
		Open: func(_ context.Context, g *Globals, _ io.Writer) (*Opened, error) {
			record("open", *g)
			return nil, agent.Userf(errNotWired, "cannot open the database in %s", g.Data)
		},
		Secrets: func(string, func(string)) agent.Secrets { return nil },
		Bridge: func(context.Context, string, string, io.Reader, io.Writer, io.Writer) error {
			return errNotWired
		},
	}, c
}

// coreEnv is a CLI whose data folder's core is core: opened here, or the
// running app's behind its control channel.
func coreEnv(t *testing.T, core *agent.Core, running bool) Env {
	t.Helper()
	data, err := os.MkdirTemp("", "dh") // short: a socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	env, _ := fakeEnv(t, map[string]string{"DESKHAND_DATA": data})
	if running {
		srv, err := control.Listen(control.SocketPath(data), control.CoreOf(core), control.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close(context.Background()) })
	} else {
		env.Open = func(_ context.Context, g *Globals, _ io.Writer) (*Opened, error) {
			return &Opened{Core: core, Close: func() {}}, nil
		}
	}
	return env
}

// parseLine parses args as Run does and runs nothing: the command found,
// and its words once its flags are parsed.
func parseLine(env Env, args []string) (*cobra.Command, []string, error) {
	inv := &invocation{env: env, stdout: io.Discard, stderr: io.Discard}
	root := inv.commands()
	c, rest, err := root.Find(argv(root, args))
	if err != nil {
		return nil, nil, err
	}
	if err := c.ParseFlags(rest); err != nil {
		return c, nil, err
	}
	return c, c.Flags().Args(), nil
}

// runLine runs args and returns the exit status with what was printed.
func runLine(t *testing.T, env Env, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = Exit(Run(t.Context(), env, args, strings.NewReader(""), &out, &errOut), &errOut)
	return status, out.String(), errOut.String()
}

// TestWrittenEntriesParse: every argv 'deskhand connect' writes into a
// client's config (Claude Desktop's stdio entry, with and without --data)
// and the hand-written orders of the same flags run the stdio command with
// the client and data folder they name.
func TestWrittenEntriesParse(t *testing.T) {
	written := func(data, defaultData string) []string {
		m, err := connect.NewManager(data, defaultData, "", "/usr/bin/deskhand", "http://127.0.0.1:7345/mcp", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Args
	}
	for _, c := range []struct {
		name       string
		args       []string
		data       string // "" is the default data folder
		wantClient string
	}{
		{"written, default data folder", written("/default", "/default"), "", connect.ClaudeDesktop.ID},
		{"written, other data folder", written("/d/x", "/default"), "/d/x", connect.ClaudeDesktop.ID},
		{"StdioArgs as such", connect.StdioArgs, "", connect.ClaudeDesktop.ID},
		{"flags before the command", []string{"--data", "/d/x", "stdio", "--client", "claude-desktop"}, "/d/x", "claude-desktop"},
		{"--flag=value forms", []string{"--data=/d/x", "stdio", "--client=claude-desktop"}, "/d/x", "claude-desktop"},
		{"client before the command", []string{"--client", "claude-desktop", "stdio", "--data", "/d/x"}, "/d/x", "claude-desktop"},
		{"single dashes", []string{"stdio", "-client", "cursor", "-data", "/d/x"}, "/d/x", "cursor"},
		{"plain stdio", []string{"stdio"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, rec := fakeEnv(t, nil)
			cmd, words, err := parseLine(env, c.args)
			if err != nil {
				t.Fatalf("%q: %v", c.args, err)
			}
			if client := cmd.Flags().Lookup("client").Value.String(); cmd.CommandPath() != "deskhand stdio" || client != c.wantClient || len(words) != 0 {
				t.Errorf("%q: command %q, client %q, words %q; want deskhand stdio, %q", c.args, cmd.CommandPath(), client, words, c.wantClient)
			}
			want := c.data
			if want == "" {
				want = env.DefaultDataDir
			}
			// With no app running, it serves in-process on that folder.
			if status, _, stderr := runLine(t, env, c.args...); status != 0 || !slices.Equal(rec.ran, []string{"stdio"}) || rec.g[0].Data != want || rec.client[0] != c.wantClient {
				t.Errorf("%q: status %d, ran %v %+v as %q; want the data folder %q\n%s", c.args, status, rec.ran, rec.g, rec.client, want, stderr)
			}
		})
	}
}

// TestGlobals: the global flags and their environment variables work
// before and after the command; flags win over the environment.
func TestGlobals(t *testing.T) {
	vars := map[string]string{"DESKHAND_DATA": "/from/env", "DESKHAND_ADDR": "127.0.0.1:9", "OLLAMA_HOST": "http://ollama.env:11434"}
	for _, c := range []struct {
		args []string
		want Globals
	}{
		{[]string{"serve"}, Globals{Data: "/from/env", Addr: "127.0.0.1:9", Ollama: "http://ollama.env:11434"}},
		{[]string{"--data", "/d", "serve", "--addr", "127.0.0.1:1", "--insecure-no-auth"},
			Globals{Data: "/d", Addr: "127.0.0.1:1", Ollama: "http://ollama.env:11434", InsecureNoAuth: true}},
		{[]string{"--ollama", "http://o:1", "--model", "qwen3", "serve"},
			Globals{Data: "/from/env", Addr: "127.0.0.1:9", Ollama: "http://o:1", Model: "qwen3"}},
		{[]string{"--data", "/d"}, Globals{Data: "/d", Addr: "127.0.0.1:9", Ollama: "http://ollama.env:11434"}},
		{[]string{"--data", "/d", "--", "serve"}, Globals{Data: "/d", Addr: "127.0.0.1:9", Ollama: "http://ollama.env:11434"}},
	} {
		env, rec := fakeEnv(t, vars)
		if status, _, stderr := runLine(t, env, c.args...); status != 0 || len(rec.g) != 1 {
			t.Fatalf("%q: status %d, ran %v\n%s", c.args, status, rec.ran, stderr)
		}
		if diff := cmp.Diff(c.want, rec.g[0]); diff != "" {
			t.Errorf("%q globals (-want +got):\n%s", c.args, diff)
		}
	}
	// Without the variables, the data folder is the default one.
	env, rec := fakeEnv(t, nil)
	if runLine(t, env, "serve"); len(rec.g) != 1 || rec.g[0].Data != env.DefaultDataDir {
		t.Errorf("default data folder: %+v", rec.g)
	}
}

// TestRefusedCommandLines: a flag the command does not take, a flag given
// twice, a misplaced argument or an unknown command exits 2 with the
// command's usage, and runs nothing.
func TestRefusedCommandLines(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"version", "--rotate"}, "deskhand: 'deskhand version' takes no flag --rotate\n\nusage: deskhand version"},
		{[]string{"--rotate", "version"}, "usage: deskhand version"},
		{[]string{"token", "list", "--backend", "foo"}, "usage: deskhand token"},
		{[]string{"token"}, "usage: deskhand token"},
		{[]string{"token", "create"}, "usage: deskhand token"},
		{[]string{"agent", "list", "--name", "x"}, "--name is for 'agent add'"},
		{[]string{"agent", "frob"}, "usage: deskhand agent"},
		{[]string{"agent", "add", "x", "--backend", "ollama", "--provider", "claude"}, "--backend ollama means the provider"},
		{[]string{"agent", "list", "--provider", "x"}, "--provider is for 'agent add'"},
		{[]string{"provider"}, "usage: deskhand provider"},
		{[]string{"provider", "frob"}, "usage: deskhand provider"},
		{[]string{"provider", "add"}, "usage: deskhand provider"},
		{[]string{"provider", "list", "extra"}, "usage: deskhand provider"},
		{[]string{"provider", "add", "claude"}, "'provider add' needs --kind"},
		{[]string{"provider", "list", "--kind", "openai"}, "--kind is for 'provider add'"},
		{[]string{"provider", "check", "x", "--key-stdin"}, "--key-stdin is for 'provider add'"},
		{[]string{"provider", "add", "x", "--kind", "openai", "--remove-key"}, "--remove-key is for 'provider edit'"},
		{[]string{"provider", "edit", "x", "--key-stdin", "--remove-key"}, "give one"},
		{[]string{"provider", "edit", "x", "--name", "y"}, "'deskhand provider edit' takes no flag --name"},
		{[]string{"provider", "add", "x", "--kind", "openai", "--key", "k"}, "use --key-stdin"},
		{[]string{"serve", "--client", "x"}, "usage: deskhand serve"},
		{[]string{"serve", "now"}, "usage: deskhand serve"},
		{[]string{"stdio", "--client", "a", "--client", "b"}, "given more than once"},
		{[]string{"--data", "/a", "serve", "--data", "/b"}, "given more than once"},
		{[]string{"connect", "cursor", "--nope"}, "usage: deskhand connect"},
		{[]string{"disconnect", "--dry-run", "cursor"}, "usage: deskhand disconnect"},
		{[]string{"answer", "ID", "--status"}, "usage: deskhand answer"},
		{[]string{"answer", "ID"}, "usage: deskhand answer"},
		{[]string{"questions", "--decline"}, "usage: deskhand questions"},
		{[]string{"--nope"}, "Usage:\n  deskhand [flags]"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"--", "serve", "now"}, "usage: deskhand serve"},
		{[]string{"help", "frobnicate"}, `no command "frobnicate"`},
		{[]string{"version", "-rotate"}, "'deskhand version' takes no flag --rotate"},
		{[]string{"stdio", "-nope"}, "'deskhand stdio' takes no flag -nope"},
		{[]string{"agent", "add", "x", "--toolserver", "fs"}, "--toolserver is for 'agent edit', not 'agent add'"},
		{[]string{"toolserver", "list", "--dry-run"}, "--dry-run is for 'toolserver import', not 'toolserver list'"},
		{[]string{"agent", "--client-may-approve", "frob"}, "usage: deskhand agent"},
		{[]string{"serve", "--data"}, "flag needs an argument: --data"},
		{[]string{"search", "x", "--limit", "many"}, "usage: deskhand search"},
		{[]string{"completion", "tcsh"}, "usage: deskhand completion"},
	} {
		env, rec := fakeEnv(t, nil)
		status, _, stderr := runLine(t, env, c.args...)
		if status != 2 || !strings.Contains(stderr, c.want) || len(rec.ran) > 0 {
			t.Errorf("%q: status %d, ran %v; want 2 and %q in:\n%s", c.args, status, rec.ran, c.want, stderr)
		}
	}
}

// TestHelp: --help, -h, -help and 'help' on every command print its usage
// on stdout and exit 0.
func TestHelp(t *testing.T) {
	env, _ := fakeEnv(t, nil)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk((&invocation{env: env}).commands(), nil)
	if len(paths) < 30 {
		t.Fatalf("only %d commands: %q", len(paths), paths)
	}
	for _, path := range paths {
		want := "usage: deskhand " + strings.Join(path, " ")
		if len(path) == 0 {
			want = "Usage:\n  deskhand [flags] [command]"
		}
		for _, args := range [][]string{append(slices.Clone(path), "--help"), append([]string{"-h"}, path...), append([]string{"help"}, path...), append(slices.Clone(path), "-help")} {
			env, rec := fakeEnv(t, nil)
			status, stdout, stderr := runLine(t, env, args...)
			if status != 0 || !strings.Contains(stdout, want) || stderr != "" || len(rec.ran) > 0 {
				t.Errorf("%q: status %d, ran %v, stdout:\n%s\nstderr:\n%s", args, status, rec.ran, stdout, stderr)
			}
		}
	}
}

// TestExitPrintsTheCause: a user error's message comes first, its cause on
// a second line; anything else is an internal error with its detail.
func TestExitPrintsTheCause(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		want   string
	}{
		{nil, 0, ""},
		{agent.Userf(errors.New("file is not a database"), "cannot open the database in /d"), 1,
			"deskhand: cannot open the database in /d\ncause: file is not a database\n"},
		{agent.Userf(nil, "no agent named x"), 1, "deskhand: no agent named x\n"},
		{errors.New("boom"), 1, "deskhand: internal error in Deskhand; the log has the details\ndetail: boom\n"},
	} {
		var stderr bytes.Buffer
		if got := Exit(c.err, &stderr); got != c.status || stderr.String() != c.want {
			t.Errorf("Exit(%v) = %d, printed %q; want %d, %q", c.err, got, stderr.String(), c.status, c.want)
		}
	}
	// Through a command: what the parts return is printed with its cause.
	env, _ := fakeEnv(t, nil)
	if status, _, stderr := runLine(t, env, "token", "list"); status != 1 || !strings.Contains(stderr, "cause: "+errNotWired.Error()) {
		t.Errorf("token list: status %d\n%s", status, stderr)
	}
}

// TestAnswerContent: what a typed answer sends for each kind of question.
func TestAnswerContent(t *testing.T) {
	approval := string(agent.KindApproval)
	for _, c := range []struct {
		kind, text, comment string
		want                map[string]any
		wantErr             bool
	}{
		{"question", "blue", "", map[string]any{"answer": "blue"}, false},
		{"question", "deny", "ignored", map[string]any{"answer": "deny"}, false},
		{approval, "approve", "", map[string]any{"approve": true}, false},
		{approval, "Yes", "", map[string]any{"approve": true}, false},
		{approval, "allow", "go ahead", map[string]any{"approve": true, "comment": "go ahead"}, false},
		{approval, "deny", "not now", map[string]any{"approve": false, "comment": "not now"}, false},
		{approval, "NO", "", map[string]any{"approve": false}, false},
		{approval, "maybe", "", nil, true},
	} {
		got, err := AnswerContent(c.kind, c.text, c.comment)
		if (err != nil) != c.wantErr || !cmp.Equal(got, c.want) {
			t.Errorf("AnswerContent(%q, %q, %q) = %v, %v", c.kind, c.text, c.comment, got, err)
		}
	}
}

// memSecrets is a keychain in memory; getErr, when set, is what Get fails with.
type memSecrets struct {
	m      map[string]string
	getErr error
}

func (s *memSecrets) Get(k string) (string, error) {
	if s.getErr != nil {
		return "", s.getErr
	}
	v, ok := s.m[k]
	if !ok {
		return "", agent.ErrNotFound
	}
	return v, nil
}
func (s *memSecrets) Set(k, v string) error { s.m[k] = v; return nil }
func (s *memSecrets) Delete(k string) error { delete(s.m, k); return nil }

// TestStdioToken: the bridge uses the keychain's token; without one it
// creates the client, keeps the new token and says where; a keychain that
// cannot be read is named. A client that exists with a token this
// keychain does not hold keeps it: the bridge refuses and says what to do.
func TestStdioToken(t *testing.T) {
	key := connect.SecretKey("claude-desktop")
	for _, c := range []struct {
		name        string
		secrets     *memSecrets
		existing    []string
		wantToken   string
		wantCreated bool
		wantNote    string
		wantErr     string
	}{
		{"kept", &memSecrets{m: map[string]string{key: "dh_kept"}}, []string{"claude-desktop"}, "dh_kept", false, "", ""},
		{"missing", &memSecrets{m: map[string]string{}}, []string{"cursor"}, "dh_new", true, "Created a token for \"claude-desktop\"", ""},
		{"no keychain", &memSecrets{m: map[string]string{}, getErr: agent.Userf(nil, "no keychain here")}, nil, "dh_new", true, "no keychain here\nCreated a token", ""},
		{"exists elsewhere", &memSecrets{m: map[string]string{}}, []string{"claude-desktop"}, "", false, "",
			`already has a client named "claude-desktop", and this keychain holds no token for it`},
	} {
		tokens := &fakeStdioTokens{existing: c.existing}
		var note bytes.Buffer
		got, err := StdioToken(t.Context(), c.secrets, tokens, "claude-desktop", &note)
		if got != c.wantToken || tokens.created != c.wantCreated || !strings.Contains(note.String(), c.wantNote) ||
			(err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(agent.UserMessage(err), c.wantErr)) {
			t.Errorf("%s: token %q, err %v, created %v, note %q", c.name, got, err, tokens.created, note.String())
		}
		if c.wantCreated && c.secrets.m[key] != "dh_new" {
			t.Errorf("%s: the new token was not kept: %v", c.name, c.secrets.m)
		}
	}
}

// fakeStdioTokens is the running app's clients, by name; it creates
// only a client that does not exist.
type fakeStdioTokens struct {
	existing []string
	created  bool
}

func (f *fakeStdioTokens) Create(_ context.Context, name string) (string, error) {
	if slices.Contains(f.existing, name) {
		return "", fmt.Errorf("a client named %q already exists", name)
	}
	f.created = true
	return "dh_new", nil
}

func (f *fakeStdioTokens) List(context.Context) (out []control.TokenInfo, _ error) {
	for _, n := range f.existing {
		out = append(out, control.TokenInfo{Name: n})
	}
	return out, nil
}
