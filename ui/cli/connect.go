package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/connect"
)

// connectFlags are the flags of 'deskhand connect'; 'deskhand
// disconnect' takes all and project.
type connectFlags struct {
	all, dryRun, rotate, status, link bool
	project                           string
	extension, extensionProgram       string // the .mcpb to write, the program it carries
}

func (inv *invocation) connectCommand() *cobra.Command {
	f := &connectFlags{}
	c := &cobra.Command{
		Use:   "connect CLIENT...|--all",
		Short: "write Deskhand into each client's config, and verify it",
		Long: `Write Deskhand into each client's config with a token of its own, read it back and verify
it with a real MCP handshake; --all: every installed client. --status reports each client's
entry: connected and verified, token refused, Deskhand not running, stale, disabled by the
client, awaiting your approval in the client, not connected. --link prints Cursor's or VS
Code's install link (it holds a token). --extension writes a Claude Desktop extension
(FILE, a .mcpb) carrying this program, or PROGRAM (a Windows, macOS or Linux deskhand); open
it with Claude Desktop to install it; it touches no config file or token.
Clients: ` + clientIDs() + `.`,
		Example: `  deskhand connect cursor claude-code
  deskhand connect --all --dry-run
  deskhand connect cursor --project .
  deskhand connect --status
  deskhand connect --link vscode
  deskhand connect claude-desktop --extension Deskhand.mcpb`,
		ValidArgs: clientList(),
		RunE: func(cmd *cobra.Command, words []string) error {
			if cmd.Flags().Changed("extension") || cmd.Flags().Changed("extension-program") {
				return inv.writeExtension(cmd, f, words)
			}
			return inv.connect(cmd.Context(), f, false, words)
		},
	}
	f.register(c, false)
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "show what would be written, write nothing")
	c.Flags().BoolVar(&f.rotate, "rotate", false, "issue new tokens even where the entry works")
	c.Flags().BoolVar(&f.status, "status", false, "report each client's entry and verify it")
	c.Flags().BoolVar(&f.link, "link", false, "print the client's install link (Cursor, VS Code)")
	c.Flags().StringVar(&f.extension, "extension", "", "claude-desktop only: write a Claude Desktop extension (a .mcpb `FILE`) instead of its config file")
	c.Flags().StringVar(&f.extensionProgram, "extension-program", "", "the deskhand `PROGRAM` the extension carries (default: this one)")
	_ = c.MarkFlagFilename("extension", "mcpb")
	_ = c.MarkFlagFilename("extension-program")
	return c
}

// register registers the flags connect and disconnect share.
func (f *connectFlags) register(c *cobra.Command, disconnect bool) {
	every := "every installed client"
	if disconnect {
		every = "every client"
	}
	c.Flags().BoolVar(&f.all, "all", false, every)
	c.Flags().StringVar(&f.project, "project", "", "the project folder `DIR`'s configuration (Cursor, Claude Code, VS Code, Gemini CLI, Qwen Code, opencode, Zed)")
	_ = c.MarkFlagDirname("project")
}

// clientList is the clients connect knows, by ID.
func clientList() []string {
	var ids []string
	for _, c := range connect.Clients() {
		ids = append(ids, c.ID)
	}
	return ids
}

func clientIDs() string { return strings.Join(clientList(), ", ") }

// endpointURL is the MCP endpoint that serving on addr gives, for when the
// app is not running to say it.
func (inv *invocation) endpointURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || host == "localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + addr + inv.env.EndpointPath
}

func (inv *invocation) newManager(f *connectFlags, url string, tokens connect.Tokens, secrets agent.Secrets) (*connect.Manager, error) {
	exe, err := inv.env.Executable()
	if err != nil {
		return nil, agent.Userf(err, "cannot find the path of this deskhand binary")
	}
	return connect.NewManager(inv.g.Data, inv.env.DefaultDataDir, f.project, exe, url, tokens, secrets)
}

// writeExtension runs 'deskhand connect claude-desktop --extension FILE':
// it writes the bundle and touches no config file, keychain or running app.
func (inv *invocation) writeExtension(cmd *cobra.Command, f *connectFlags, words []string) error {
	ctx, given := cmd.Context(), cmd.Flags().Changed
	if !given("extension") || f.extension == "" {
		return usagef(cmd, "--extension-program needs --extension FILE: the .mcpb file to write")
	}
	if len(words) != 1 || words[0] != connect.ClaudeDesktop.ID {
		return usagef(cmd, "--extension is for Claude Desktop alone: deskhand connect %s --extension FILE", connect.ClaudeDesktop.ID)
	}
	for _, other := range []string{"all", "project", "dry-run", "rotate", "status", "link"} {
		if given(other) {
			return usagef(cmd, "--extension writes a file and connects nothing: it takes no --%s", other)
		}
	}
	program := f.extensionProgram
	if program == "" {
		exe, err := inv.env.Executable()
		if err != nil {
			return agent.Userf(err, "cannot find the path of this deskhand binary")
		}
		program = exe
	}
	platform, err := connect.WriteExtension(ctx, f.extension, connect.Extension{
		Program: program, Version: inv.env.Version, Args: connect.StdioArgsFor(inv.g.Data, inv.env.DefaultDataDir), Icon: inv.env.ExtensionIcon,
	})
	var xerr *connect.ExtensionError
	if errors.As(err, &xerr) {
		return agent.Userf(xerr.Err, "%s", xerr.Problem)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(inv.stdout, ExtensionWritten(f.extension, platform))
	return nil
}

// ExtensionWritten says what a written extension is for and what to do
// with it.
func ExtensionWritten(path, platform string) string {
	system := map[string]string{connect.PlatformWindows: "Windows", connect.PlatformMac: "macOS", connect.PlatformLinux: "Linux"}[platform]
	out := fmt.Sprintf("Wrote %s: a Claude Desktop extension for %s.\n", path, system)
	if platform == connect.PlatformLinux {
		return out + "Claude Desktop runs on Windows and macOS, not Linux: build the extension there (deskhand connect claude-desktop --extension FILE), or keep this one to check it.\n"
	}
	return out + "Open it with Claude Desktop to install it: double-click it, or in Claude Desktop go to Settings, Extensions, Advanced settings, Install Extension.\n" +
		"It runs 'deskhand stdio', which takes Claude Desktop's token from the system keychain. If Claude Desktop also has Deskhand in its config file ('deskhand connect claude-desktop'), run 'deskhand disconnect claude-desktop', or Claude Desktop lists Deskhand twice.\n"
}

// connect runs 'deskhand connect' and 'deskhand disconnect'.
func (inv *invocation) connect(ctx context.Context, f *connectFlags, disconnect bool, args []string) error {
	clients, err := pickClients(f, disconnect, args)
	if err != nil {
		return err
	}
	explicitAddr := inv.g.Addr != ""
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	stdout, stderr := inv.stdout, inv.stderr
	var m *connect.Manager
	if ctl != nil {
		st, err := ctl.Status(ctx)
		if err != nil {
			return err
		}
		secrets := inv.env.Secrets(inv.g.Data, func(msg string) { fmt.Fprintln(stderr, msg) })
		if m, err = inv.newManager(f, st.URL, controlTokens{ctl}, secrets); err != nil {
			return err
		}
	} else {
		// Where the app served last, unless told where it will serve.
		url := inv.endpointURL(inv.g.Addr)
		last, err := app.Core.Settings().Get(ctx, agent.SettingLastURL, "")
		if err != nil {
			return agent.Userf(err, "cannot read where Deskhand served last from the database in %s", inv.g.Data)
		}
		if last != "" && !explicitAddr {
			url = last
		}
		if m, err = inv.newManager(f, url, connect.ClientTokens{Clients: app.Core.Clients()}, app.Secrets); err != nil {
			return err
		}
	}

	switch {
	case f.link:
		link, config, err := m.Link(ctx, clients[0])
		if err != nil {
			return asUserError(err)
		}
		fmt.Fprintf(stdout, "%s will be asked to add this server:\n%s\n\n%s\n", clients[0].Name, config, link)
		fmt.Fprintln(stderr, "The link holds a token: treat it like a password. Opening it hands it to the client on a command line; 'deskhand connect "+clients[0].ID+"' writes the file instead and keeps it off every command line.")
		return nil
	case f.status:
		return report(ctx, stdout, clients, m.Status, f.status)
	case disconnect:
		return report(ctx, stdout, clients, m.Disconnect, f.status)
	}
	if f.dryRun {
		for _, c := range clients {
			preview, err := m.Preview(c)
			if err != nil {
				return asUserError(err)
			}
			p, _ := connect.Path(c, m.Env)
			fmt.Fprintf(stdout, "%s (%s) would get:\n%s\n\n", c.Name, p, preview)
		}
	}
	do := func(ctx context.Context, c connect.Client) (connect.Report, error) {
		return m.Connect(ctx, c, connect.ConnectOptions{Rotate: f.rotate, DryRun: f.dryRun})
	}
	return report(ctx, stdout, clients, do, f.status)
}

// pickClients resolves the named clients, or every installed one with
// --all (every known one for --status).
func pickClients(opts *connectFlags, disconnect bool, args []string) ([]connect.Client, error) {
	var ids []string
	for _, c := range connect.Clients() {
		ids = append(ids, c.ID)
	}
	usage := fmt.Sprintf("name a client (%s) or pass --all", strings.Join(ids, ", "))
	if opts.link && len(args) != 1 {
		return nil, userf("--link needs exactly one client: cursor or vscode")
	}
	all := opts.all || (opts.status && len(args) == 0)
	if all && len(args) > 0 {
		return nil, userf("pass either --all or client names, not both")
	}
	if !all {
		if len(args) == 0 {
			return nil, userf("%s", usage)
		}
		var out []connect.Client
		for _, id := range args {
			c, ok := connect.Lookup(id)
			if !ok {
				return nil, userf("unknown client %q: %s", id, usage)
			}
			if _, err := connect.Path(c, connect.Env{Home: "/", Project: opts.project}); errors.Is(err, connect.ErrNoProjectScope) {
				return nil, asUserError(err)
			}
			out = append(out, c)
		}
		return out, nil
	}
	env, err := connect.DefaultEnv()
	if err != nil {
		return nil, agent.Userf(err, "cannot find your home folder")
	}
	env.Project = opts.project
	var out []connect.Client
	for _, c := range connect.Clients() {
		if _, err := connect.Path(c, env); errors.Is(err, connect.ErrNoProjectScope) {
			continue
		}
		if opts.status || disconnect || connect.Installed(c, env) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, userf("none of %s is installed for this user", strings.Join(ids, ", "))
	}
	return out, nil
}

// report runs do for each client, prints a table of outcomes and the
// hints, and fails when any client failed or does not work.
func report(ctx context.Context, w io.Writer, clients []connect.Client, do func(context.Context, connect.Client) (connect.Report, error), status bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tSTATE\tFILE")
	var notes []string
	failed := 0
	for _, c := range clients {
		r, err := do(ctx, c)
		state, ok := connect.Describe(r, err)
		if status && r.State.Condition == connect.Connected && r.Check.Health != connect.Verified {
			ok = false
		}
		if !ok {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, state, connect.FileOf(r))
		switch {
		case err != nil:
			notes = append(notes, c.Name+": "+connect.Explain(err))
		case r.Check.Health > connect.Verified:
			notes = append(notes, c.Name+": "+r.Check.Detail)
		}
		if r.Hint != "" {
			notes = append(notes, c.Name+": "+r.Hint)
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	if failed > 0 {
		what := "connected and verified"
		if status {
			what = "working"
		}
		return userf("%d of %d clients not %s (see above)", failed, len(clients), what)
	}
	return nil
}

// asUserError makes err one whose message Exit shows as it is.
func asUserError(err error) error {
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return err
	}
	return agent.Userf(err, "%s", connect.Explain(err))
}
