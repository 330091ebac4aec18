package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/cli"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
	"github.com/deskhand/deskhand/ui/desktop/connector"
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
	if m, changed := desktop.WithFyneDo(fy.Metadata(), fy.UniqueID()); changed {
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
	exe, err := os.Executable()
	if err != nil {
		a.log.Warn("connecting clients is not available: cannot find the path of this deskhand binary", "err", err)
	} else if m, err := connect.NewManager(g.Data, defaultDataDir(), "", exe, srv.url, connect.ClientTokens{Clients: a.core.Clients()}, a.secrets); err != nil {
		a.log.Warn("connecting clients is not available", "err", err)
	} else {
		conn = connector.New(m, a.log, connect.Extension{Program: exe, Version: version, Icon: assets.Icon.Content()}, filepath.Join(g.Data, connect.ExtensionFile))
	}
	opts := desktop.Options{Tray: tray, ServerURL: srv.url, DataDir: g.Data, Logger: a.log, Connector: conn,
		Icon: assets.Icon, TrayIcon: assets.TrayIcon, PausedIcon: assets.TrayPausedIcon, QuestionIcon: assets.TrayQuestionIcon,
		InEffect: map[string]string{
			"server.addr":             g.Addr,
			"ollama.host":             cmp.Or(g.Ollama, os.Getenv("OLLAMA_HOST"), "http://127.0.0.1:11434"),
			"server.insecure_no_auth": fmt.Sprint(g.InsecureNoAuth),
		}}
	if conn != nil {
		opts.ImportToolServers = connector.ImportToolServers(a.core.ToolServers(), srv.url, exe)
	}
	if a.noModel {
		opts.Notice = desktop.NoModelNotice
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
