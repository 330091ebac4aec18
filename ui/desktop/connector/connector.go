// Package connector backs the desktop's Connect tab, and its import of the
// clients' tool servers, with the client-config writers (ui/connect): it
// turns what they report into what the desktop shows. It is the desktop's
// side of that seam, so it uses the desktop's types and never fyne.
package connector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
)

// Connector is a desktop.Connector over a connect.Manager, with the
// Claude Desktop extension of this program.
type Connector struct {
	m             *connect.Manager
	log           *slog.Logger
	extension     connect.Extension // this program, its version and icon
	extensionPath string            // where it is written: the data folder
}

var _ desktop.Connector = Connector{}

// New is the Connect tab's connector: m writes the clients' files;
// extension is written at extensionPath.
func New(m *connect.Manager, log *slog.Logger, extension connect.Extension, extensionPath string) Connector {
	return Connector{m: m, log: log, extension: extension, extensionPath: extensionPath}
}

// repairWords say, for an entry that does not work, why, in a person's
// words (the command line's status says "connected, stale").
var repairWords = map[connect.Health]string{
	connect.TokenRefused: "Deskhand no longer accepts its token: Repair gives it a new one",
	connect.NoToken:      "its entry is missing its token: Repair gives it one",
	connect.Stale:        "its entry points at another Deskhand address: Repair writes this one",
	connect.Broken:       "its entry does not work: Repair writes it again",
}

// State is a client's report as the Connect tab shows it.
func State(r connect.Report, err error) desktop.ClientState {
	status, _ := connect.Describe(r, err)
	if words, ok := repairWords[r.Check.Health]; ok && err == nil && r.State.Condition == connect.Connected {
		status = words
	}
	st := desktop.ClientState{
		ID: r.Client.ID, Name: r.Client.Name, File: connect.FileOf(r), Status: status,
		Installed: r.State.Condition != connect.NotInstalled,
		Connected: r.State.Condition == connect.Connected,
		Working:   r.State.Condition == connect.Connected && r.Check.Health == connect.Verified,
		HasLink:   r.Client.ID == connect.Cursor.ID || r.Client.ID == connect.VSCode.ID,
		Extension: r.Client.ID == connect.ClaudeDesktop.ID,
		Detail:    r.Hint,
	}
	switch {
	case err != nil:
		st.Detail = connect.Explain(err)
	case r.Check.Health > connect.Verified:
		st.Detail = strings.TrimSpace(r.Check.Detail + " " + r.Hint)
	}
	return st
}

func (c Connector) Clients(ctx context.Context) []desktop.ClientState {
	var out []desktop.ClientState
	for _, cl := range connect.Clients() {
		out = append(out, State(c.m.Status(ctx, cl)))
	}
	return out
}

func lookup(id string) (connect.Client, error) {
	cl, ok := connect.Lookup(id)
	if !ok {
		return cl, fmt.Errorf("unknown client %q", id)
	}
	return cl, nil
}

func (c Connector) Connect(ctx context.Context, id string, rotate bool) (desktop.ClientState, error) {
	cl, err := lookup(id)
	if err != nil {
		return desktop.ClientState{}, err
	}
	r, err := c.m.Connect(ctx, cl, connect.ConnectOptions{Rotate: rotate})
	if err != nil {
		return desktop.ClientState{}, errors.New(connect.Explain(err))
	}
	return State(r, nil), nil
}

func (c Connector) Disconnect(ctx context.Context, id string) (desktop.ClientState, error) {
	cl, err := lookup(id)
	if err != nil {
		return desktop.ClientState{}, err
	}
	if _, err := c.m.Disconnect(ctx, cl); err != nil {
		return desktop.ClientState{}, errors.New(connect.Explain(err))
	}
	// Report what is left in the file now.
	return State(c.m.Status(ctx, cl)), nil
}

func (c Connector) Preview(id string) (string, error) {
	cl, err := lookup(id)
	if err != nil {
		return "", err
	}
	return c.m.Preview(cl)
}

func (c Connector) LinkPreview(ctx context.Context, id string) (string, bool, error) {
	cl, err := lookup(id)
	if err != nil {
		return "", false, err
	}
	return c.m.LinkPreview(ctx, cl)
}

// Extension writes the Claude Desktop extension of this program, started
// with the arguments of the config file's entry (the data folder when it
// is not the default one).
func (c Connector) Extension(ctx context.Context, progress func(done, total int64)) (string, bool, error) {
	x := c.extension
	x.Args, x.Progress = c.m.Args, progress
	platform, err := connect.WriteExtension(ctx, c.extensionPath, x)
	if err != nil {
		c.log.Warn("cannot write the Claude Desktop extension", "path", c.extensionPath, "err", err)
		var xerr *connect.ExtensionError
		if errors.As(err, &xerr) {
			return "", false, errors.New(xerr.Problem)
		}
		return "", false, err
	}
	return c.extensionPath, platform == connect.PlatformWindows || platform == connect.PlatformMac, nil
}

func (c Connector) Link(ctx context.Context, id string) (string, string, error) {
	cl, err := lookup(id)
	if err != nil {
		return "", "", err
	}
	return c.m.Link(ctx, cl)
}

// ImportToolServers is the desktop's import of the servers every client
// knows, Deskhand's own entries (at url, or running exe) left out,
// registered on servers.
func ImportToolServers(servers ToolServers, url, exe string) func(ctx context.Context, dryRun bool) (desktop.ImportReport, error) {
	return func(ctx context.Context, dryRun bool) (desktop.ImportReport, error) {
		env, err := connect.DefaultEnv()
		if err != nil {
			return desktop.ImportReport{}, agent.Userf(err, "cannot find your home folder")
		}
		r, err := connect.ImportServers(ctx, importTarget{servers}, env, connect.ImportOptions{URLs: []string{url}, Commands: []string{exe}}, dryRun)
		if err != nil {
			return desktop.ImportReport{}, err
		}
		out := desktop.ImportReport{Imported: r.Imported, Notes: r.Notes()}
		for _, row := range r.Rows {
			out.Rows = append(out.Rows, desktop.ImportRow{Name: row.Found.Name, From: row.From(), Result: r.Result(row)})
		}
		return out, nil
	}
}

// ToolServers are the core's tool servers, which an import adds to.
type ToolServers interface {
	List() []agent.ToolServer
	Add(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
}

// importTarget registers on the core's tool servers.
type importTarget struct{ ToolServers }

func (t importTarget) Registered(context.Context) ([]string, error) {
	var names []string
	for _, s := range t.List() {
		names = append(names, s.Name)
	}
	return names, nil
}
