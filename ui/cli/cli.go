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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
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

	// Desktop runs the tray app; HaveDisplay (nil: there is one) says
	// whether it can, or Serve serves headless instead.
	Desktop     func(ctx context.Context, g Globals, stderr io.Writer) error
	HaveDisplay func() bool
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

func init() {
	// Deskhand is a tray app people start from Explorer: cobra would
	// show its "this is a command line tool" splash there and exit.
	cobra.MousetrapHelpText = ""
	// The commands are listed in the order they are added, related
	// commands together, not alphabetically.
	cobra.EnableCommandSorting = false
}

// usageError marks a command line that is not understood: Exit prints the
// message and the command's usage, and exits with status 2.
type usageError struct{ usage string }

func (e *usageError) Error() string { return "command line not understood" }

// usagef is a command line c does not understand, with c's usage.
func usagef(c *cobra.Command, format string, args ...any) error {
	return agent.Userf(&usageError{usage(c)}, format, args...)
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

// invocation is one run of the command line: what main handed in, the
// globals once parsed, and the standard streams.
type invocation struct {
	env            Env
	completing     bool // a shell completion's request
	g              Globals
	stdin          io.Reader
	stdout, stderr io.Writer
}

// reach finds the running app's control channel, so that a command's
// changes apply at once, or else opens the data folder itself; done
// closes what was opened.
func (inv *invocation) reach(ctx context.Context) (ctl *control.Client, app *Opened, done func(), err error) {
	if ctl, err := control.Dial(control.SocketPath(inv.g.Data)); err == nil {
		return ctl, nil, func() {}, nil
	}
	app, err = inv.env.Open(ctx, &inv.g, inv.stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	return nil, app, app.Close, nil
}

// Run runs the command line args (without the program name).
func Run(ctx context.Context, env Env, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	inv := &invocation{env: env, completing: completing(args), stdin: stdin, stdout: stdout, stderr: stderr}
	root := inv.commands()
	root.SetArgs(argv(root, args))
	_, err := root.ExecuteContextC(ctx)
	return err
}

// commands is the command tree of this run; the root command, run
// without a command, is the tray app.
func (inv *invocation) commands() *cobra.Command {
	root := &cobra.Command{
		Use:   "deskhand",
		Short: "Deskhand serves your own AI agents as MCP tools to every AI client on this computer.",
		Long: "Without a command, Deskhand starts as a tray app with its window (headless when there is\n" +
			"no display).",
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true, // Exit prints them
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			inv.g.complete(cmd.Flags(), inv.env)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef(cmd, "unknown command %q; see 'deskhand --help'", args[0])
			}
			return inv.desktop(cmd.Context())
		},
	}
	root.SetIn(inv.stdin)
	root.SetOut(inv.stdout)
	root.SetErr(inv.stderr)
	inv.g.register(root.PersistentFlags(), inv.env)
	root.AddCommand(
		inv.serveCommand(),
		inv.stdioCommand(),
		inv.connectCommand(),
		inv.disconnectCommand(),
		inv.tokenCommand(),
		inv.agentCommand(),
		inv.providerCommand(),
		inv.toolServerCommand(),
		inv.questionsCommand(),
		inv.answerCommand(),
		inv.approvalsCommand(),
		inv.logCommand(),
		inv.searchCommand(),
		completionCommand(),
		inv.versionCommand(),
	)
	root.SetHelpCommand(helpCommand())
	finish(root, !inv.completing)
	return root
}

// register registers the global flags, as persistent flags of the root.
// Their defaults are said in their usage, and set by complete: the
// environment variables' and main's.
func (g *Globals) register(fs *pflag.FlagSet, env Env) {
	fs.StringVar(&g.Data, "data", "", fmt.Sprintf("data folder `DIR` (env DESKHAND_DATA; default %s)", env.DefaultDataDir))
	fs.StringVar(&g.Addr, "addr", "", fmt.Sprintf("MCP endpoint address `HOST:PORT` (env DESKHAND_ADDR; default %s)", env.DefaultAddr))
	fs.StringVar(&g.Ollama, "ollama", "", "Ollama server `URL` (env OLLAMA_HOST; default http://127.0.0.1:11434)")
	fs.StringVar(&g.Model, "model", "", "model `NAME` of the default agent \"assistant\" (default: the first installed); agent add and edit: the agent's model")
	fs.BoolVar(&g.InsecureNoAuth, "insecure-no-auth", false, "open local development: accept MCP requests without a token (INSECURE)")
}

// complete gives the globals not given as flags their environment
// variables' values, and the data folder its default.
func (g *Globals) complete(fs *pflag.FlagSet, env Env) {
	for _, v := range []struct {
		flag, env string
		value     *string
	}{{"data", "DESKHAND_DATA", &g.Data}, {"addr", "DESKHAND_ADDR", &g.Addr}, {"ollama", "OLLAMA_HOST", &g.Ollama}} {
		if !fs.Changed(v.flag) {
			*v.value = env.Getenv(v.env)
		}
	}
	g.Data = cmp.Or(g.Data, env.DefaultDataDir)
}

// desktop runs the tray app, or serves headless without a display; a
// second launch shows the first one's window instead.
func (inv *invocation) desktop(ctx context.Context) error {
	if inv.env.HaveDisplay != nil && !inv.env.HaveDisplay() {
		fmt.Fprintln(inv.stderr, "No display (DISPLAY and WAYLAND_DISPLAY are unset): serving headless. Answer questions with 'deskhand questions' and 'deskhand answer'.")
		return inv.env.Serve(ctx, inv.g, inv.stderr)
	}
	if ctl, err := control.Dial(control.SocketPath(inv.g.Data)); err == nil {
		if err := ctl.ShowWindow(ctx); err != nil {
			return err
		}
		fmt.Fprintln(inv.stderr, "Deskhand is already running; its window is shown.")
		return nil
	}
	return inv.env.Desktop(ctx, inv.g, inv.stderr)
}
