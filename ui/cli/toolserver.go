package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// toolServerKeeper is what 'deskhand toolserver' and the tool-server
// flags of 'deskhand agent edit' need: the running app's control channel
// (so a change applies at once, and secrets go to the app's keychain over
// its private socket), or the core over the store.
type toolServerKeeper interface {
	ToolServers(ctx context.Context) ([]control.ToolServerInfo, error)
	AddToolServer(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
	RemoveToolServer(ctx context.Context, name string) error
	CheckToolServer(ctx context.Context, name string) (agent.ToolServerCheck, error)
	HeldToolServerTools(ctx context.Context) ([]agent.HeldTool, error)
	AgentToolServers(ctx context.Context, slug string) ([]agent.AgentToolServer, error)
	AttachToolServer(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error)
	DetachToolServer(ctx context.Context, slug, server string) error
	RepinToolServerTool(ctx context.Context, slug, server, tool string) error
}

var _ toolServerKeeper = (*control.Client)(nil)

// coreToolServers is toolServerKeeper on the core, when the app is not
// running.
type coreToolServers struct{ c *agent.Core }

func (k coreToolServers) ToolServers(context.Context) ([]control.ToolServerInfo, error) {
	return control.ToolServerInfos(k.c.ToolServers().List(), k.c.ToolServers().Statuses()), nil
}

func (k coreToolServers) AddToolServer(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error {
	return k.c.ToolServers().Add(ctx, s, sec)
}

func (k coreToolServers) RemoveToolServer(ctx context.Context, name string) error {
	return k.c.ToolServers().Remove(ctx, name)
}

func (k coreToolServers) CheckToolServer(ctx context.Context, name string) (agent.ToolServerCheck, error) {
	return k.c.ToolServers().Check(ctx, name)
}

func (k coreToolServers) HeldToolServerTools(context.Context) ([]agent.HeldTool, error) {
	return k.c.ToolServers().Held(), nil
}

func (k coreToolServers) AgentToolServers(_ context.Context, slug string) ([]agent.AgentToolServer, error) {
	return k.c.ToolServers().Attached(slug)
}

func (k coreToolServers) AttachToolServer(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error) {
	return k.c.ToolServers().Attach(ctx, slug, req)
}

func (k coreToolServers) DetachToolServer(ctx context.Context, slug, server string) error {
	return k.c.ToolServers().Detach(ctx, slug, server)
}

func (k coreToolServers) RepinToolServerTool(ctx context.Context, slug, server, tool string) error {
	return k.c.ToolServers().Repin(ctx, slug, server, tool)
}

// reachToolServers is inv.reach for the tool-server commands.
func (inv *invocation) reachToolServers(ctx context.Context) (toolServerKeeper, func(), error) {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return nil, nil, err
	}
	if ctl != nil {
		return ctl, done, nil
	}
	return coreToolServers{app.Core}, done, nil
}

const toolServerSynopsis = "deskhand toolserver add NAME (--command CMD [-- ARGS…] | --url URL) [--env K=V]… [--secret-env K]… [--header K=V]… [--secret-header K]… [--dir DIR] [--allow-sampling]\n" +
	"       deskhand toolserver list | toolserver check NAME | toolserver remove NAME | toolserver held\n" +
	"       deskhand toolserver import [--dry-run] [CLIENT…]"

// toolServerFields are the flags of toolserver add.
var toolServerFields = []string{"command", "url", "env", "secret-env", "header", "secret-header", "dir", "allow-sampling"}

// repeatable marks a flag that may be given more than once.
type repeatable interface{ repeatable() }

// pairsFlag collects K=V flags.
type pairsFlag struct {
	name string
	m    *map[string]string
}

func (p pairsFlag) repeatable()    {}
func (p pairsFlag) String() string { return "" }

func (p pairsFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("--%s takes NAME=VALUE", p.name)
	}
	if *p.m == nil {
		*p.m = map[string]string{}
	}
	if _, dup := (*p.m)[k]; dup {
		return fmt.Errorf("--%s %s is given more than once", p.name, k)
	}
	(*p.m)[k] = v
	return nil
}

// secretRef names one secret, in the order the flags gave it: its value
// is read in that order.
type secretRef struct {
	header bool // a header; else an environment variable
	name   string
}

type secretFlag struct {
	header bool
	list   *[]secretRef
	onArgv *bool // a value was given: refused before anything runs
}

func (s secretFlag) repeatable()    {}
func (s secretFlag) String() string { return "" }

func (s secretFlag) Set(v string) error {
	if strings.Contains(v, "=") {
		// A value on the command line shows in the process list and the
		// shell's history: refused by runToolServer, and never repeated
		// (an error here would be printed with the value).
		*s.onArgv = true
		return nil
	}
	*s.list = append(*s.list, secretRef{header: s.header, name: v})
	return nil
}

func toolServerFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.StringVar(&f.tsCommand, "command", "", "add: the command that runs the server (stdio); its arguments follow '--'")
	fs.StringVar(&f.url, "url", "", "add: the server's Streamable HTTP endpoint")
	fs.StringVar(&f.tsDir, "dir", "", "add: the folder the command runs in")
	fs.Var(pairsFlag{"env", &f.tsEnv}, "env", "add: an environment variable NAME=VALUE for the command (repeatable; not secret)")
	fs.Var(pairsFlag{"header", &f.tsHeaders}, "header", "add: a header NAME=VALUE sent to the URL (repeatable; not secret)")
	fs.Var(secretFlag{false, &f.tsSecrets, &f.tsSecretOnArgv}, "secret-env", "add: the NAME of a secret environment variable (repeatable); its value is read from stdin, one line per secret in the order given, or asked for without echo, and kept in the keychain")
	fs.Var(secretFlag{true, &f.tsSecrets, &f.tsSecretOnArgv}, "secret-header", "add: the NAME of a secret header, e.g. Authorization (repeatable); read as --secret-env")
	fs.BoolVar(&f.allowSampling, "allow-sampling", false, "add: let the server ask for the agent's model (off: refused)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "import: show what would be registered, register nothing")
}

func runToolServer(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if f.tsSecretOnArgv {
		// Before anything else: the value must not be used, or repeated.
		return usagef(usage, "a secret's value is never taken on the command line, where other programs and the shell's history see it: give --secret-env or --secret-header only its NAME; its value is read from stdin, one line per secret, or asked for without echo; and consider the value exposed")
	}
	if len(words) == 0 {
		return usagef(usage, "usage: %s", toolServerSynopsis)
	}
	sub, rest := words[0], words[1:]
	wantArgs := map[string]int{"list": 0, "check": 1, "remove": 1, "held": 0}
	if n, known := wantArgs[sub]; sub != "add" && sub != "import" && (!known || len(rest) != n) {
		return usagef(usage, "usage: %s", toolServerSynopsis)
	}
	if sub != "add" {
		for _, name := range toolServerFields {
			if inv.set[name] {
				return usagef(usage, "--%s is for 'toolserver add', not 'toolserver %s'", name, sub)
			}
		}
	}
	if inv.set["dry-run"] && sub != "import" {
		return usagef(usage, "--dry-run is for 'toolserver import', not 'toolserver %s'", sub)
	}
	if sub == "import" {
		return inv.importToolServers(ctx, f, rest)
	}
	var (
		s   agent.ToolServer
		sec agent.ToolServerSecrets
	)
	if sub == "add" {
		if len(rest) == 0 {
			return usagef(usage, "usage: %s", toolServerSynopsis)
		}
		switch {
		case inv.set["command"] == inv.set["url"]:
			return usagef(usage, "'toolserver add' needs either --command (a server Deskhand runs) or --url (a Streamable HTTP server)")
		case inv.set["url"] && len(rest) > 1:
			return usagef(usage, "arguments are for --command, not --url")
		}
		s = agent.ToolServer{Name: rest[0], Command: f.tsCommand, Args: rest[1:], Dir: f.tsDir, URL: f.url,
			Env: f.tsEnv, Headers: f.tsHeaders, AllowSampling: f.allowSampling}
		for _, ref := range f.tsSecrets {
			if ref.header {
				s.SecretHeaders = append(s.SecretHeaders, ref.name)
			} else {
				s.SecretEnv = append(s.SecretEnv, ref.name)
			}
		}
		// Read before reaching the app: a refused secret starts nothing.
		var err error
		if sec, err = readSecrets(inv.stdin, inv.stderr, s.Name, f.tsSecrets); err != nil {
			return err
		}
	}
	keeper, done, err := inv.reachToolServers(ctx)
	if err != nil {
		return err
	}
	defer done()
	stdout, stderr := inv.stdout, inv.stderr
	switch sub {
	case "list":
		list, err := keeper.ToolServers(ctx)
		if err != nil {
			return err
		}
		printToolServers(stdout, list)
		return nil
	case "held":
		held, err := keeper.HeldToolServerTools(ctx)
		if err != nil {
			return err
		}
		printHeld(stdout, held)
		return nil
	case "check":
		fmt.Fprintf(stderr, "Starting %s and asking for its tools…\n", rest[0])
		check, err := keeper.CheckToolServer(ctx, rest[0])
		if err != nil {
			return err
		}
		if check.Error != "" {
			return userf("%s", terminalText(check.Error)+logNote(check.Status))
		}
		fmt.Fprintf(stderr, "%s is %s with %d tool(s):\n", rest[0], check.Status.State, len(check.Tools))
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME THE MODEL SEES\tTOOL\tAPPROVAL\tDESCRIPTION")
		for _, t := range check.Tools {
			approval := "asks"
			if t.ReadOnly {
				approval = "read-only"
			}
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
			if len(desc) > 80 {
				desc = desc[:77] + "..."
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, terminalText(t.Tool), approval, terminalText(desc))
		}
		return tw.Flush()
	case "remove":
		if err := keeper.RemoveToolServer(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Removed tool server %s: it is detached from every agent and its secrets are deleted.\n", rest[0])
		return nil
	}
	if err := keeper.AddToolServer(ctx, s, sec); err != nil {
		return err
	}
	note := ""
	if n := len(f.tsSecrets); n > 0 {
		note = fmt.Sprintf(" Its %d secret(s) are in the keychain (or, where a warning says so, the fallback file).", n)
	}
	fmt.Fprintf(stderr, "Added tool server %s.%s Check it with 'deskhand toolserver check %s', then give it to an agent with 'deskhand agent edit SLUG --toolserver %s'.\n", s.Name, note, s.Name, s.Name)
	return nil
}

// maxSecretLen bounds one secret read from stdin.
const maxSecretLen = 16 << 10

// readSecrets reads the secrets' values: from a terminal, asked one by
// one without echo; otherwise one line each from stdin, in order. Nothing
// read is ever put in an error.
func readSecrets(stdin io.Reader, stderr io.Writer, server string, refs []secretRef) (agent.ToolServerSecrets, error) {
	var sec agent.ToolServerSecrets
	if len(refs) == 0 {
		return sec, nil
	}
	what := func(r secretRef) string {
		if r.header {
			return "header " + r.name
		}
		return "environment variable " + r.name
	}
	file, isFile := stdin.(*os.File)
	tty := isFile && term.IsTerminal(int(file.Fd()))
	lines := bufio.NewReaderSize(stdin, maxSecretLen+2)
	for _, r := range refs {
		var value string
		if tty {
			fmt.Fprintf(stderr, "Value of the secret %s of %s (not shown): ", what(r), server)
			b, err := term.ReadPassword(int(file.Fd()))
			fmt.Fprintln(stderr)
			if err != nil {
				return sec, agent.Userf(err, "cannot read the secret %s", what(r))
			}
			value = string(b)
		} else {
			line, err := lines.ReadString('\n')
			switch {
			case err != nil && !errors.Is(err, io.EOF):
				return sec, agent.Userf(err, "cannot read the secret %s from stdin", what(r))
			case len(line) > maxSecretLen+1:
				return sec, userf("the secret %s on stdin is longer than %d bytes", what(r), maxSecretLen)
			}
			value = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		}
		if value == "" {
			return sec, userf("no value for the secret %s: give one line per secret on stdin, in the order of the --secret-env and --secret-header flags", what(r))
		}
		if r.header {
			sec.Headers = setOnce(sec.Headers, r.name, value)
		} else {
			sec.Env = setOnce(sec.Env, r.name, value)
		}
	}
	return sec, nil
}

func setOnce(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// where is where a server runs, without secrets: the command and its
// arguments, or the URL without its query and user.
func where(s agent.ToolServer) string {
	if s.Command != "" {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func logNote(st agent.ToolServerStatus) string {
	if st.LogFile == "" {
		return ""
	}
	return " (its log: " + st.LogFile + ")"
}

func printToolServers(w io.Writer, list []control.ToolServerInfo) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No tool server yet: add one with 'deskhand toolserver add'.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTRANSPORT\tWHERE\tSTATE\tTOOLS\tLAST ERROR\tLOG")
	for _, s := range list {
		transport := "http"
		if s.IsStdio() {
			transport = "stdio"
		}
		lastErr, _, _ := strings.Cut(s.Status.LastError, "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, transport, terminalText(where(s.ToolServer)), s.Status.State, s.Status.Tools,
			cmp.Or(terminalText(lastErr), "-"), cmp.Or(s.Status.LogFile, "-"))
	}
	tw.Flush()
}

func printHeld(w io.Writer, held []agent.HeldTool) {
	if len(held) == 0 {
		fmt.Fprintln(w, "No tool is held.")
		return
	}
	for _, h := range held {
		fmt.Fprintf(w, "%s: the tool %s of %s changed since it was attached; it is held.\n  before: %s\n  now:    %s\n  look, then: deskhand agent edit %s --repin %s:%s\n",
			h.Agent, terminalText(h.Tool), h.Server, cmp.Or(terminalText(h.Old), "(never seen)"), terminalText(h.New), h.Agent, h.Server, terminalText(h.Tool))
	}
}

// ---- the tool-server flags of agent edit ----

// agentToolServerFields are the flags of agent edit that change its tool
// servers; they go alone.
var agentToolServerFields = []string{"toolserver", "ask-first", "no-toolserver", "repin"}

func agentToolServerFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.StringVar(&f.toolServer, "toolserver", "", "edit: give the agent a tool server's tools: NAME for all of them, NAME:TOOL,TOOL… for those")
	fs.StringVar(&f.askFirst, "ask-first", "", "edit, with --toolserver: TOOL,TOOL… whose every call waits for your approval (tools the server does not mark read-only always do)")
	fs.StringVar(&f.noToolServer, "no-toolserver", "", "edit: take a tool server's tools from the agent")
	fs.StringVar(&f.repin, "repin", "", "edit: SERVER:TOOL, a held tool whose new definition you looked at (see 'deskhand toolserver held'): offer it again")
}

// runAgentToolServers runs the tool-server flags of agent edit; handled
// is false when none is given.
func runAgentToolServers(ctx context.Context, inv *invocation, f *cmdFlags, sub string, rest []string, usage string) (handled bool, err error) {
	given := slices.ContainsFunc(agentToolServerFields, func(n string) bool { return inv.set[n] })
	if !given {
		return false, nil
	}
	if sub != "edit" {
		return true, usagef(usage, "--toolserver, --ask-first, --no-toolserver and --repin are for 'agent edit'")
	}
	if others := slices.ContainsFunc(append(slices.Clone(agentFields), "model"), func(n string) bool { return inv.set[n] }); others {
		return true, usagef(usage, "change an agent's tool servers in an 'agent edit' of their own, without other changes")
	}
	n := 0
	for _, name := range []string{"toolserver", "no-toolserver", "repin"} {
		if inv.set[name] {
			n++
		}
	}
	switch {
	case n != 1:
		return true, usagef(usage, "give one of --toolserver, --no-toolserver and --repin")
	case inv.set["ask-first"] && !inv.set["toolserver"]:
		return true, usagef(usage, "--ask-first goes with --toolserver")
	}
	keeper, done, err := inv.reachToolServers(ctx)
	if err != nil {
		return true, err
	}
	defer done()
	slug, stderr := rest[0], inv.stderr
	split := func(s string) []string {
		return slices.DeleteFunc(strings.Split(s, ","), func(t string) bool { return strings.TrimSpace(t) == "" })
	}
	switch {
	case inv.set["no-toolserver"]:
		if err := keeper.DetachToolServer(ctx, slug, f.noToolServer); err != nil {
			return true, err
		}
		fmt.Fprintf(stderr, "%s no longer has the tools of %s.\n", slug, f.noToolServer)
	case inv.set["repin"]:
		server, tool, ok := strings.Cut(f.repin, ":")
		if !ok || server == "" || tool == "" {
			return true, usagef(usage, "--repin takes SERVER:TOOL")
		}
		if err := keeper.RepinToolServerTool(ctx, slug, server, tool); err != nil {
			return true, err
		}
		fmt.Fprintf(stderr, "The tool %s of %s is pinned to its definition as it is now, and offered to %s again.\n", tool, server, slug)
	default:
		server, tools, _ := strings.Cut(f.toolServer, ":")
		req := agent.ToolServerAttachment{Server: server, Tools: split(tools), AskFirst: split(f.askFirst)}
		att, err := keeper.AttachToolServer(ctx, slug, req)
		if err != nil {
			return true, err
		}
		which := "all its tools"
		if !att.AllTools {
			which = fmt.Sprintf("%d of its tools", len(att.Tools))
		}
		fmt.Fprintf(stderr, "%s has %s of %s, each pinned to its definition as it is now.\n", slug, which, server)
		for _, t := range att.Tools {
			if t.Hash == "" {
				fmt.Fprintf(stderr, "The server could not be asked for its tools: they are held until you look (deskhand toolserver check %s, then --repin).\n", server)
				break
			}
		}
	}
	return true, nil
}
