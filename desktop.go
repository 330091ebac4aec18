package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/cli"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
	"github.com/deskhand/deskhand/ui/desktop/platform"
)

// runDesktop runs the tray app: the agents served, the window and the popups.
// With no display it says so and serves headless.
func runDesktop(ctx context.Context, g cli.Globals, stderr io.Writer) error {
	if !platform.HaveDisplay() {
		fmt.Fprintln(stderr, "No display (DISPLAY and WAYLAND_DISPLAY are unset): serving headless. Answer questions with 'deskhand questions' and 'deskhand answer'.")
		return serve(ctx, g, stderr)
	}
	// A second launch shows the first one's window instead.
	if ctl, err := control.Dial(control.SocketPath(g.Data)); err == nil {
		if err := ctl.ShowWindow(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "Deskhand is already running; its window is shown.")
		return nil
	}
	ctx, a, cleanup, err := boot(ctx, &g, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	fy := fyneapp.NewWithID("io.deskhand.Deskhand")
	if m, changed := withFyneDo(fy.Metadata(), fy.UniqueID()); changed {
		fyneapp.SetMetadata(m)
	}
	var shown atomic.Pointer[desktop.App] // set once the window exists
	show := func() bool {
		fyne.Do(func() {
			if w := shown.Load(); w != nil {
				w.Show()
			}
		})
		return true
	}
	srv, err := startServing(ctx, g, a, stderr, show, listen)
	if err != nil {
		return err
	}
	defer srv.stop()

	tray := platform.TrayUsable()
	if !tray {
		a.log.Info("no D-Bus session bus: running without a tray icon")
	}
	var conn desktop.Connector
	if exe, err := os.Executable(); err != nil {
		a.log.Warn("connecting clients is not available: cannot find the path of this deskhand binary", "err", err)
	} else if m, err := connect.NewManager(g.Data, defaultDataDir(), "", exe, srv.url, connect.ClientTokens{Clients: a.core.Clients()}, a.secrets); err != nil {
		a.log.Warn("connecting clients is not available", "err", err)
	} else {
		conn = connector{m: m, log: a.log, extensionPath: filepath.Join(g.Data, connect.ExtensionFile),
			extension: connect.Extension{Program: exe, Version: version, Icon: assets.Icon.Content()}}
	}
	opts := desktop.Options{Tray: tray, ServerURL: srv.url, DataDir: g.Data, Logger: a.log, Connector: conn,
		Icon: assets.Icon, TrayIcon: assets.TrayIcon, PausedIcon: assets.TrayPausedIcon, QuestionIcon: assets.TrayQuestionIcon,
		InEffect: map[string]string{
			"server.addr":             g.Addr,
			"ollama.host":             cmp.Or(g.Ollama, os.Getenv("OLLAMA_HOST"), "http://127.0.0.1:11434"),
			"server.insecure_no_auth": fmt.Sprint(g.InsecureNoAuth),
		}}
	if exe, err := os.Executable(); err == nil {
		opts.ImportToolServers = func(ctx context.Context, dryRun bool) (int, string, error) {
			var b strings.Builder
			n, err := cli.ImportToolServers(ctx, a.core, srv.url, exe, dryRun, &b)
			return n, b.String(), err
		}
	}
	if a.noModel {
		opts.Notice = noModelNotice
	}

	win := desktop.New(fy, desktop.CoreOf(a.core), opts)
	shown.Store(win)
	defer win.Close() // once fyne has stopped (desktop.New says why not in its stop hook)
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	win.Follow(followCtx)
	// The HTTP server's failure, if it is why the app quits.
	failure := make(chan error, 1)
	go func() {
		select {
		case <-followCtx.Done():
		case err := <-srv.failed:
			a.log.Error("HTTP server stopped", "err", err)
			failure <- agent.Userf(err, "the MCP endpoint %s stopped serving", srv.url)
		}
		fyne.Do(fy.Quit)
	}()
	win.Show()
	fy.Run()
	select {
	case err := <-failure:
		return err
	default:
		return nil
	}
}

// withFyneDo is the app's metadata saying what FyneApp.toml says to the
// fyne tool's builds: this app calls fyne on fyne's goroutine only
// (fyne.Do). Without it (any go build) fyne checks the goroutine of every
// refresh by parsing a stack trace, an eighth of the UI thread's time
// under load. changed is false when the metadata says so already.
func withFyneDo(m fyne.AppMetadata, id string) (_ fyne.AppMetadata, changed bool) {
	if m.Migrations["fyneDo"] {
		return m, false
	}
	m.Migrations = maps.Clone(m.Migrations)
	if m.Migrations == nil {
		m.Migrations = map[string]bool{}
	}
	m.Migrations["fyneDo"] = true
	// An empty ID and name would make fyne look for FyneApp.toml again.
	m.ID, m.Name = cmp.Or(m.ID, id), cmp.Or(m.Name, "Deskhand")
	return m, true
}

// connector gives the desktop's Connect tab the config writers, and the
// Claude Desktop extension of this program.
type connector struct {
	m             *connect.Manager
	log           *slog.Logger
	extension     connect.Extension // this program, its version and icon
	extensionPath string            // where it is written: the data folder
}

func (c connector) state(r connect.Report, err error) desktop.ClientState {
	status, _ := connect.Describe(r, err)
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
		return desktop.ClientState{}, errors.New(connect.Explain(err))
	}
	return c.state(r, nil), nil
}

func (c connector) Disconnect(ctx context.Context, id string) (desktop.ClientState, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return desktop.ClientState{}, err
	}
	if _, err := c.m.Disconnect(ctx, cl); err != nil {
		return desktop.ClientState{}, errors.New(connect.Explain(err))
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

func (c connector) LinkPreview(ctx context.Context, id string) (string, bool, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return "", false, err
	}
	return c.m.LinkPreview(ctx, cl)
}

// Extension writes the Claude Desktop extension of this program, started
// with the arguments of the config file's entry (the data folder when it
// is not the default one).
func (c connector) Extension(ctx context.Context, progress func(done, total int64)) (string, bool, error) {
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

func (c connector) Link(ctx context.Context, id string) (string, string, error) {
	cl, err := c.lookup(id)
	if err != nil {
		return "", "", err
	}
	return c.m.Link(ctx, cl)
}

// noModelNotice is what the window's first-run panel says when first
// start found no model server on this computer, until the servers are
// asked again; the panel then says what to do, step by step.
const noModelNotice = "When Deskhand started, no model server answered on this computer (Ollama, LM Studio, llama.cpp, vLLM), so the agent 'assistant' has no model yet. Looking again…"
