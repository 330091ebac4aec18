package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
)

// tokenKeeper manages client tokens: through the running app when there
// is one (controlTokens), else on the store (coreTokens).
type tokenKeeper interface {
	Create(ctx context.Context, name string) (string, error)
	Rotate(ctx context.Context, name string) (string, error)
	List(ctx context.Context) ([]control.TokenInfo, error)
	Revoke(ctx context.Context, name string) error
}

// controlTokens manages tokens through the running app, so they apply at once.
type controlTokens struct{ ctl *control.Client }

func (t controlTokens) Create(ctx context.Context, name string) (string, error) {
	return t.ctl.CreateToken(ctx, name)
}

func (t controlTokens) Rotate(ctx context.Context, name string) (string, error) {
	return t.ctl.RotateToken(ctx, name)
}

func (t controlTokens) List(ctx context.Context) ([]control.TokenInfo, error) {
	return t.ctl.Tokens(ctx)
}

func (t controlTokens) Revoke(ctx context.Context, name string) error {
	return t.ctl.RevokeToken(ctx, name)
}

// coreTokens manages tokens on a core in this process: the app's own, or
// the store opened directly when the app is not running.
type coreTokens struct{ core *agent.Core }

func (t coreTokens) Create(ctx context.Context, name string) (string, error) {
	_, token, err := t.core.CreateClient(ctx, name)
	return token, err
}

func (t coreTokens) Rotate(ctx context.Context, name string) (string, error) {
	_, token, err := t.core.RotateClient(ctx, name)
	return token, err
}

func (t coreTokens) List(context.Context) ([]control.TokenInfo, error) {
	return control.Tokens(t.core), nil
}

func (t coreTokens) Revoke(ctx context.Context, name string) error {
	return t.core.RevokeClient(ctx, name)
}

// lastURLSetting keeps the endpoint the app served at last.
const lastURLSetting = "server.last_url"

// endpointURL is the MCP endpoint that serving on addr gives, for when the
// app is not running to say it.
func endpointURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || host == "localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + addr + mcpserver.EndpointPath
}

// newManager describes this Deskhand (its endpoint, binary and data
// folder) to the config writers.
func newManager(opts options, url string, tokens connect.Tokens, secrets agent.Secrets) (*connect.Manager, error) {
	env, err := connect.DefaultEnv()
	if err != nil {
		return nil, agent.Userf(err, "cannot find your home folder")
	}
	if opts.project != "" {
		if env.Project, err = filepath.Abs(opts.project); err != nil {
			return nil, agent.Userf(err, "--project %q", opts.project)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, agent.Userf(err, "cannot find the path of this deskhand binary")
	}
	args := append([]string(nil), connect.StdioArgs...)
	if opts.data != defaultDataDir() {
		args = append(args, "--data", opts.data)
	}
	return &connect.Manager{Env: env, URL: url, Command: exe, Args: args, Tokens: tokens, Secrets: secrets}, nil
}

// connectCommand runs 'deskhand connect' and 'deskhand disconnect'.
func connectCommand(ctx context.Context, opts options, disconnect bool, args []string, stdout, stderr io.Writer) error {
	clients, err := pickClients(opts, disconnect, args)
	if err != nil {
		return err
	}
	explicitAddr := opts.addr != ""
	ctl, a, done, err := reach(ctx, &opts, stderr)
	if err != nil {
		return err
	}
	defer done()
	var m *connect.Manager
	if ctl != nil {
		st, err := ctl.Status(ctx)
		if err != nil {
			return err
		}
		secrets := secretsIn(opts.data, func(msg string) { fmt.Fprintln(stderr, msg) })
		if m, err = newManager(opts, st.URL, controlTokens{ctl}, secrets); err != nil {
			return err
		}
	} else {
		// Where the app served last, unless told where it will serve.
		url := endpointURL(opts.addr)
		if last := setting(ctx, a.core, lastURLSetting); last != "" && !explicitAddr {
			url = last
		}
		if m, err = newManager(opts, url, coreTokens{a.core}, a.secrets); err != nil {
			return err
		}
	}

	switch {
	case opts.link:
		link, config, err := m.Link(ctx, clients[0])
		if err != nil {
			return asUserError(err)
		}
		fmt.Fprintf(stdout, "%s will be asked to add this server:\n%s\n\n%s\n", clients[0].Name, config, link)
		fmt.Fprintln(stderr, "The link holds a token: treat it like a password. Opening it hands it to the client on a command line; 'deskhand connect "+clients[0].ID+"' writes the file instead and keeps it off every command line.")
		return nil
	case opts.status:
		return report(ctx, stdout, clients, m.Status, opts)
	case disconnect:
		return report(ctx, stdout, clients, m.Disconnect, opts)
	}
	if opts.dryRun {
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
		return m.Connect(ctx, c, connect.ConnectOptions{Rotate: opts.rotate, DryRun: opts.dryRun})
	}
	return report(ctx, stdout, clients, do, opts)
}

// pickClients resolves the named clients, or every installed one with
// --all (every known one for --status).
func pickClients(opts options, disconnect bool, args []string) ([]connect.Client, error) {
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
func report(ctx context.Context, w io.Writer, clients []connect.Client, do func(context.Context, connect.Client) (connect.Report, error), opts options) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tSTATE\tFILE")
	var notes []string
	failed := 0
	for _, c := range clients {
		r, err := do(ctx, c)
		state, ok := describe(r, err)
		if opts.status && r.State.Condition == connect.Connected && r.Check.Health != connect.Verified {
			ok = false
		}
		if !ok {
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, state, fileOf(r))
		switch {
		case err != nil:
			notes = append(notes, c.Name+": "+problem(err))
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
		if opts.status {
			what = "working"
		}
		return userf("%d of %d clients not %s (see above)", failed, len(clients), what)
	}
	return nil
}

// fileOf names a report's configuration file, and the file it leads to
// when it is a link.
func fileOf(r connect.Report) string {
	p := cmp.Or(r.State.Path, r.Result.Path)
	if real := cmp.Or(r.State.Real, r.Result.Real); real != "" {
		return p + " -> " + real
	}
	return p
}

// describe says in a few words what a report means, and whether it is a
// success.
func describe(r connect.Report, err error) (string, bool) {
	if err != nil {
		var perr *connect.ParseError
		if errors.As(err, &perr) {
			return "refused: the file does not parse, left untouched", false
		}
		var lerr *connect.LimitError
		if errors.As(err, &lerr) {
			if lerr.TooDeep() {
				return "refused: the file is nested too deeply, left untouched", false
			}
			return "refused: the file is too large, left untouched", false
		}
		var uerr *connect.UnsafePathError
		if errors.As(err, &uerr) {
			switch uerr.Problem {
			case connect.LeavesProject:
				return "refused: a link out of the project, left untouched", false
			case connect.DanglingLink:
				return "refused: a link to nothing, left untouched", false
			}
			return "refused: not a regular file, left untouched", false
		}
		return "failed", false
	}
	switch r.Action {
	case connect.WouldWrite:
		return "would connect (dry run)", true
	case connect.Removed:
		return "disconnected, token revoked", true
	}
	switch r.State.Condition {
	case connect.NotInstalled:
		return "not installed", true
	case connect.NotConnected:
		return "not connected", true
	}
	verb := "connected"
	if r.Action == connect.Wrote {
		verb = "written"
	}
	switch r.Check.Health {
	case connect.Verified:
		tools := "tools"
		if r.Check.Tools == 1 {
			tools = "tool"
		}
		return fmt.Sprintf("%s, verified (%d %s)", verb, r.Check.Tools, tools), true
	case connect.NotRunning:
		// Written (or left as it was), but not provable until the app runs.
		return verb + ", not verified: Deskhand is not running", true
	}
	return verb + ", " + r.Check.Health.String(), false
}

// asUserError makes err one whose message main shows as it is.
func asUserError(err error) error {
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return err
	}
	return agent.Userf(err, "%s", problem(err))
}

// problem words an error for the person: the connect package's errors
// (a file that does not parse, a folder that cannot be written) already
// are; the core's say only what a person should see.
func problem(err error) string {
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return agent.UserMessage(err)
	}
	return strings.TrimPrefix(err.Error(), "connect: ")
}

// connector gives the desktop's Connect tab the config writers.
type connector struct{ m *connect.Manager }

func (c connector) state(r connect.Report, err error) desktop.ClientState {
	status, _ := describe(r, err)
	st := desktop.ClientState{
		ID: r.Client.ID, Name: r.Client.Name, File: fileOf(r), Status: status,
		Installed: r.State.Condition != connect.NotInstalled,
		Connected: r.State.Condition == connect.Connected,
		Working:   r.State.Condition == connect.Connected && r.Check.Health == connect.Verified,
		HasLink:   r.Client.ID == connect.Cursor.ID || r.Client.ID == connect.VSCode.ID,
		Detail:    r.Hint,
	}
	switch {
	case err != nil:
		st.Detail = problem(err)
	case r.Check.Health > connect.Verified:
		st.Detail = strings.TrimSpace(r.Check.Detail + " " + r.Hint)
	}
	return st
}

func (c connector) Clients(ctx context.Context) []desktop.ClientState {
	var out []desktop.ClientState
	for _, cl := range connect.Clients() {
		out = append(out, c.state(c.m.Status(ctx, cl)))
	}
	return out
}

func (c connector) lookup(id string) (connect.Client, error) {
	cl, ok := connect.Lookup(id)
	if !ok {
		return cl, fmt.Errorf("unknown client %q", id)
	}
	return cl, nil
}

func (c connector) Connect(ctx context.Context, id string, rotate bool) (desktop.ClientState, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return desktop.ClientState{}, err
	}
	r, err := c.m.Connect(ctx, cl, connect.ConnectOptions{Rotate: rotate})
	if err != nil {
		return desktop.ClientState{}, errors.New(problem(err))
	}
	return c.state(r, nil), nil
}

func (c connector) Disconnect(ctx context.Context, id string) (desktop.ClientState, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return desktop.ClientState{}, err
	}
	if _, err := c.m.Disconnect(ctx, cl); err != nil {
		return desktop.ClientState{}, errors.New(problem(err))
	}
	// Report what is left in the file now.
	return c.state(c.m.Status(ctx, cl)), nil
}

func (c connector) Preview(id string) (string, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return "", err
	}
	return c.m.Preview(cl)
}

func (c connector) Link(ctx context.Context, id string) (string, string, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return "", "", err
	}
	return c.m.Link(ctx, cl)
}
