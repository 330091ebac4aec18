// Package cli is Deskhand's command line: its commands, their flags and
// usage, what they print and their exit status. It runs nothing itself:
// the store, the core, the MCP server, the models and the desktop are
// built by package main and handed in through [Env].
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// Globals are the flags every command takes, before or after its name.
type Globals struct {
	Data           string // data folder (env DESKHAND_DATA)
	Addr           string // MCP endpoint address (env DESKHAND_ADDR); "" means Settings, else the default
	Ollama         string // Ollama server URL (env OLLAMA_HOST)
	Model          string // model of the default agent; agent add and edit: the agent's model
	InsecureNoAuth bool   // accept MCP requests without a token
}

// Opened is the data folder opened in this process: the core over the
// store, and the keychain.
type Opened struct {
	Core    *agent.Core
	Secrets agent.Secrets
	Close   func()
}

// Env is what the commands run, built by main.
type Env struct {
	Version        string
	DefaultDataDir string
	DefaultAddr    string
	EndpointPath   string // the MCP endpoint's path, e.g. "/mcp"

	Getenv     func(key string) string
	Executable func() (string, error) // this binary, for the entries connect writes
	// ExtensionIcon is the PNG a Claude Desktop extension shows; may be nil.
	ExtensionIcon []byte

	// Desktop runs the tray app (headless when there is no display).
	Desktop func(ctx context.Context, g Globals, stderr io.Writer) error
	// Serve serves the agents headless until ctx ends or a signal comes.
	Serve func(ctx context.Context, g Globals, stderr io.Writer) error
	// ServeStdio serves the agents in-process over stdin and stdout, as
	// the named client where one is given.
	ServeStdio func(ctx context.Context, g Globals, client string, stdin io.Reader, stdout, stderr io.Writer) error
	// Open opens the data folder here, when the app is not running;
	// it completes g from Settings (the address, the Ollama host).
	Open func(ctx context.Context, g *Globals, stderr io.Writer) (*Opened, error)
	// Secrets is the keychain; warn is told when a secret goes to (or
	// stays in) its fallback file.
	Secrets func(data string, warn func(string)) agent.Secrets
	// Bridge relays stdio to the running app's endpoint with the token.
	Bridge func(ctx context.Context, url, token string, stdin io.Reader, stdout, stderr io.Writer) error
}

// usageError marks a command line that is not understood: Exit prints the
// message and the command's usage, and exits with status 2.
type usageError struct{ usage string }

func (e *usageError) Error() string { return "command line not understood" }

func usagef(usage, format string, args ...any) error {
	return agent.Userf(&usageError{usage}, format, args...)
}

func userf(format string, args ...any) error { return agent.Userf(nil, format, args...) }

// Exit prints err for the person and returns the exit status: 0 for
// success and --help, 2 for a command line not understood, 1 otherwise.
// A user error's cause goes on a second line.
func Exit(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "deskhand:", agent.UserMessage(err))
	var usage *usageError
	if errors.As(err, &usage) {
		fmt.Fprint(stderr, "\n"+usage.usage)
		return 2
	}
	var ue *agent.UserError
	switch {
	case !errors.As(err, &ue):
		fmt.Fprintln(stderr, "detail:", err)
	case ue.Err != nil:
		fmt.Fprintln(stderr, "cause:", ue.Err)
	}
	return 1
}

// invocation is one run of the command line.
type invocation struct {
	env            Env
	g              Globals
	set            map[string]bool // the flags given
	stdin          io.Reader
	stdout, stderr io.Writer
}

// Run runs the command line args (without the program name).
func Run(ctx context.Context, env Env, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseLine(env, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, p.usage)
		return err
	}
	if err != nil {
		return err
	}
	p.inv.stdin, p.inv.stdout, p.inv.stderr = stdin, stdout, stderr
	return p.cmd.run(ctx, p.inv, p.flags, p.words, p.usage)
}

// parsed is a command line understood: the command, its flags and words.
type parsed struct {
	cmd   command
	inv   *invocation
	flags *cmdFlags
	words []string
	usage string
}

// parseLine finds the command and parses its flags, the globals among
// them, with the environment variables as the globals' defaults.
func parseLine(env Env, args []string) (parsed, error) {
	inv := &invocation{env: env, set: map[string]bool{}}
	inv.g = Globals{Data: env.Getenv("DESKHAND_DATA"), Addr: env.Getenv("DESKHAND_ADDR"), Ollama: env.Getenv("OLLAMA_HOST")}
	name, rest := splitCommand(args)
	c, ok := lookup(name)
	if !ok {
		return parsed{}, usagef(inv.mainUsage(), "unknown command %q; see 'deskhand --help'", name)
	}
	p := parsed{cmd: c, inv: inv, flags: &cmdFlags{}}
	fs := flag.NewFlagSet("deskhand "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Exit prints the error and the usage
	fs.Usage = func() {}
	inv.g.register(fs)
	if c.flags != nil {
		c.flags(fs, p.flags)
	}
	p.usage = inv.usageOf(c)
	refuseRepeats(fs)
	words, err := parse(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		return p, err
	}
	if err != nil {
		return p, usagef(p.usage, "%s", flagProblem(c, err))
	}
	p.words = words
	fs.Visit(func(fl *flag.Flag) { inv.set[fl.Name] = true })
	inv.g.Data = cmp.Or(inv.g.Data, env.DefaultDataDir)
	return p, nil
}

// splitCommand finds the command's name: the first word that is neither a
// flag nor a flag's value. The flags before it go to the command's flag
// set with those after it, so "deskhand --data DIR stdio --client NAME"
// and "deskhand stdio --client NAME --data DIR" are the same.
func splitCommand(args []string) (name string, rest []string) {
	takesValue := map[string]bool{}
	for _, c := range commands {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		new(Globals).register(fs)
		if c.flags != nil {
			c.flags(fs, new(cmdFlags))
		}
		fs.VisitAll(func(f *flag.Flag) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				takesValue[f.Name] = true
			}
		})
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" { // the end of the flags: the command comes next
			if i+1 == len(args) {
				return "", args
			}
			return args[i+1], append(append(slices.Clone(args[:i]), "--"), args[i+2:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return a, append(slices.Clone(args[:i]), args[i+1:]...)
		}
		n, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && takesValue[n] {
			i++
		}
	}
	return "", args
}

// flagProblem words the flag package's complaint for the person.
func flagProblem(c command, err error) string {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		return fmt.Sprintf("'deskhand %s' takes no flag --%s", c.name, name)
	}
	return err.Error()
}

// parse parses flags before, between and after the positional words.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return words, nil
		}
		if consumed := args[:len(args)-fs.NArg()]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(words, fs.Args()...), nil // after "--", only words
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// once refuses a flag given twice: which one wins would be a guess.
type once struct {
	flag.Value
	name string
	seen bool
}

func (o *once) Set(s string) error {
	if o.seen {
		return fmt.Errorf("--%s is given more than once", o.name)
	}
	o.seen = true
	return o.Value.Set(s)
}

func (o *once) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func refuseRepeats(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(refusedKey); ok { // refused however often given
			return
		}
		if _, ok := f.Value.(repeatable); ok { // --header, --env…
			return
		}
		f.Value = &once{Value: f.Value, name: f.Name}
	})
}

func (g *Globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.Data, "data", g.Data, "data folder (env DESKHAND_DATA)")
	fs.StringVar(&g.Addr, "addr", g.Addr, "MCP endpoint address HOST:PORT (env DESKHAND_ADDR)")
	fs.StringVar(&g.Ollama, "ollama", g.Ollama, "Ollama server URL (env OLLAMA_HOST)")
	fs.StringVar(&g.Model, "model", g.Model, "model of the default agent \"assistant\" (agent add, edit: the agent's model)")
	fs.BoolVar(&g.InsecureNoAuth, "insecure-no-auth", g.InsecureNoAuth, "accept MCP requests without a token (INSECURE)")
}

// cmdFlags holds the flags of every command; each command's flag set
// registers only its own.
type cmdFlags struct {
	client                             string // stdio
	decline                            bool   // answer
	comment                            string // answer
	all, dryRun, rotate, status, link  bool   // connect (disconnect: all)
	extension, extensionProgram        string // connect: the .mcpb to write, the program it carries
	project                            string // connect, disconnect
	name, prompt, description, backend string // agent add and edit
	provider                           string // agent add and edit
	kind, url                          string // provider add and edit
	keyStdin, removeKey, keyOnArgv     bool   // provider add and edit (keyOnArgv: --key, refused)
	reach                              string // agent add and edit: host:port, comma-separated
	clientMayApprove                   bool   // agent add and edit
	icon                               string // agent add and edit: an emoji or an image file
	always, ruleClient                 bool   // answer: always allow, for this client only
	ruleFolder, ruleHost               string // answer: always allow in this folder, on this host
	logAgent, logSince                 string // log
	follow, json                       bool   // log
	logArguments                       bool   // agent add and edit
	// toolserver add (url is --url); agent edit's tool-server flags
	tsCommand, tsDir                          string
	tsEnv, tsHeaders                          map[string]string
	tsSecrets                                 []secretRef
	allowSampling, tsSecretOnArgv             bool
	toolServer, askFirst, noToolServer, repin string
	team                                      string // agent add and edit: slugs, comma-separated
	noTeam                                    bool   // agent add and edit
	searchLimit                               int    // search
}

// command is one command: its name, synopsis, flags and what it runs.
type command struct {
	name     string
	synopsis string // the usage lines, without "usage: "
	flags    func(fs *flag.FlagSet, f *cmdFlags)
	run      func(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error
}

// commands are the commands; "" is the tray app, run without a command.
var commands []command

func init() {
	commands = []command{
		{name: "", synopsis: "deskhand [flags]", run: runDesktop},
		{name: "serve", synopsis: "deskhand serve [flags]", run: runServe},
		{name: "stdio", synopsis: "deskhand stdio [--client NAME] [flags]", flags: stdioFlags, run: runStdio},
		{name: "token", synopsis: tokenSynopsis, flags: tokenFlags, run: runToken},
		{name: "agent", synopsis: agentSynopsis, flags: agentFlags, run: runAgent},
		{name: "provider", synopsis: providerSynopsis, flags: providerFlags, run: runProvider},
		{name: "toolserver", synopsis: toolServerSynopsis, flags: toolServerFlags, run: runToolServer},
		{name: "connect", synopsis: "deskhand connect CLIENT...|--all [--project DIR] [--dry-run] [--rotate]\n       deskhand connect --status [CLIENT...]\n       deskhand connect --link CLIENT\n       deskhand connect claude-desktop --extension FILE [--extension-program PROGRAM]", flags: connectFlags, run: runConnect},
		{name: "disconnect", synopsis: "deskhand disconnect CLIENT...|--all [--project DIR]", flags: disconnectFlags, run: runDisconnect},
		{name: "questions", synopsis: "deskhand questions [flags]", run: runQuestions},
		{name: "answer", synopsis: "deskhand answer ID TEXT | answer ID approve|deny [--comment TEXT] | answer ID approve --always [--client] [--folder DIR] [--host HOST] | answer ID --decline", flags: answerFlags, run: runAnswer},
		{name: "approvals", synopsis: approvalsSynopsis, run: runApprovals},
		{name: "version", synopsis: "deskhand version", run: runVersion},
		{name: "help", synopsis: "deskhand help [COMMAND]", run: runHelp},
		{name: "log", synopsis: logSynopsis, flags: logFlags, run: runLog},
		{name: "search", synopsis: searchSynopsis, flags: searchFlags, run: runSearch},
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// usageOf is a command's usage: its synopsis, its own flags, then the
// global ones.
func (inv *invocation) usageOf(c command) string {
	if c.name == "" {
		return inv.mainUsage()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n", c.synopsis)
	own := flag.NewFlagSet(c.name, flag.ContinueOnError)
	if c.flags != nil {
		c.flags(own, new(cmdFlags))
	}
	own.SetOutput(&b)
	n := 0
	own.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(&b, "\nflags:")
		own.PrintDefaults()
	}
	global := flag.NewFlagSet("global", flag.ContinueOnError)
	g := Globals{Data: inv.env.DefaultDataDir, Addr: inv.env.DefaultAddr}
	g.register(global)
	global.SetOutput(&b)
	fmt.Fprintln(&b, "\nglobal flags (before or after the command):")
	global.PrintDefaults()
	return b.String()
}

func (inv *invocation) mainUsage() string {
	return fmt.Sprintf(mainUsage, inv.env.DefaultDataDir, inv.env.DefaultAddr)
}

const mainUsage = `Deskhand serves your own AI agents as MCP tools to every AI client on this computer.

Usage:
  deskhand [flags] [command] [arguments]

Without a command, Deskhand starts as a tray app with its window (headless when there is
no display).

Commands:
  serve                 serve the agents headless on http://ADDR/mcp until stopped (Ctrl-C)
  stdio [--client NAME] for stdio-only clients: bridge to the running app with the client's
                        token from the keychain (NAME, default "stdio"), or serve the agents
                        in-process when the app is not running
  connect CLIENT...|--all
                        write Deskhand into each client's config with a token of its own,
                        read it back and verify it with a real MCP handshake; clients:
                        cursor, claude-code, vscode, windsurf, codex, claude-desktop,
                        gemini, qwen, opencode, zed, lmstudio, goose
      --project DIR     the project's file instead (Cursor, Claude Code, VS Code, Gemini CLI,
                        Qwen Code, opencode, Zed)
      --dry-run         show what would be written, write nothing
      --rotate          issue new tokens even where the entry works
  connect --status [CLIENT...]
                        report each client's entry: connected and verified, token
                        refused, Deskhand not running, stale, disabled by the client,
                        awaiting your approval in the client, not connected
  connect --link CLIENT print Cursor's or VS Code's install link (it holds a token)
  connect claude-desktop --extension FILE [--extension-program PROGRAM]
                        write a Claude Desktop extension (FILE, a .mcpb) carrying this program
                        (or PROGRAM: a Windows, macOS or Linux deskhand); open it with
                        Claude Desktop to install it; touches no config file or token
  disconnect CLIENT...|--all
                        remove Deskhand's entry and revoke that client's token
  token create NAME     create a bearer token for the client NAME; prints the token alone
  token list            list clients, when their tokens were created and last used,
                        and which agents each sees
  token rotate NAME     give the client a new token (its conversations stay its own)
  token revoke NAME     revoke the client's token at once
  token agents NAME [--all | SLUG...]
                        show which agents the client sees, or let it see all
                        of them (--all) or only the agents named
  agent list            list the agents
  agent add SLUG        add an agent (SLUG is its tool name) with --name, --provider, --model,
                        --prompt, --description, --backend provider|client
  agent edit SLUG       change the given fields of an agent
  agent enable SLUG | agent disable SLUG
                        put an agent on the tool list or take it off
  agent remove SLUG     delete an agent and its conversations
                        (while the app runs, clients hear of every change at once)
  provider list         list the model servers agents run on, with whether each has a key
  provider add NAME --kind KIND [--url URL] [--key-stdin]
                        add one; KIND is ollama, openai-compatible, openai or anthropic;
                        --key-stdin reads its API key from stdin into the keychain (a key
                        is never taken on the command line)
  provider edit NAME    change the given fields; --remove-key removes its key
  provider check NAME   list the models its server offers (exit status 1 if it cannot)
  provider remove NAME  delete a provider no agent uses, and its key
  toolserver add|list|check|remove|held|import
                        your own MCP servers as agents' tools ('deskhand toolserver --help')
  questions             list the questions the agents are waiting on (while serve runs)
  answer ID TEXT        answer a question; for an approval, TEXT is approve or deny
                        (add --comment TEXT for the agent); --decline declines instead
  answer ID approve --always [--client] [--folder DIR] [--host HOST]
                        approve, and always allow that tool for that agent from now on
                        (only for this client, inside DIR, on HOST when given)
  approvals list        list the approval rules ("always allow") with their IDs
  approvals revoke ID   revoke a rule: the agent's next such call asks again
  approvals enable ID   turn on a rule that waits for review, for every client it names
  log                   the activity log: every MCP request, question and approval; with
                        --client NAME, --agent SLUG, --since DUR, --follow, --json (JSON Lines)
  search TEXT...        find the words in every conversation (yours and the agents' messages,
                        every client's), newest first; --agent SLUG, --client NAME, --limit N
  version               print the version
  help [COMMAND]        print this, or a command's usage and flags

Each command refuses flags it does not take (exit status 2); 'deskhand COMMAND --help'
lists them.

Flags (before or after the command):
  --data DIR            data folder (env DESKHAND_DATA; default %s)
  --addr HOST:PORT      MCP endpoint address (env DESKHAND_ADDR; default %s)
  --ollama URL          Ollama server (env OLLAMA_HOST; default http://127.0.0.1:11434)
  --model NAME          model of the default agent "assistant" (default: the first installed)
  --insecure-no-auth    open local development: accept MCP requests without a token (INSECURE)
`
