package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	fyneapp "fyne.io/fyne/v2/app"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/ui/cli"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
	"github.com/deskhand/deskhand/ui/desktop/connector"
	"github.com/deskhand/deskhand/ui/desktop/platform"
)

// runDesktop runs the tray app: the agents served, the window and the
// popups.
func (p program) runDesktop(ctx context.Context, g cli.Globals, stderr io.Writer) error {
	ctx, a, cleanup, err := p.boot(ctx, &g, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	fy := fyneapp.NewWithID("io.deskhand.Deskhand")
	if m, changed := desktop.WithFyneDo(fy.Metadata(), fy.UniqueID()); changed {
		fyneapp.SetMetadata(m)
	}
	launch := desktop.NewLaunch(fy)
	srv, err := startServing(ctx, g, a, stderr, launch.Show, listen)
	if err != nil {
		return err
	}
	defer srv.Stop()

	tray := platform.TrayUsable()
	if !tray {
		a.log.Info("no D-Bus session bus: running without a tray icon")
	}
	var conn desktop.Connector
	exe, err := os.Executable()
	if err != nil {
		a.log.Warn("connecting clients is not available: cannot find the path of this deskhand binary", "err", err)
	} else if m, err := connect.NewManager(g.Data, store.DefaultDir(), "", exe, srv.URL, connect.ClientTokens{Clients: a.core.Clients()}, a.secrets); err != nil {
		a.log.Warn("connecting clients is not available", "err", err)
	} else {
		conn = connector.New(m, a.log, connect.Extension{Program: exe, Version: version, Icon: assets.Icon.Content()}, filepath.Join(g.Data, connect.ExtensionFile))
	}
	opts := desktop.Options{Tray: tray, ServerURL: srv.URL, DataDir: g.Data, Logger: a.log, Connector: conn,
		Icon: assets.Icon, TrayIcon: assets.TrayIcon, PausedIcon: assets.TrayPausedIcon, QuestionIcon: assets.TrayQuestionIcon,
		InEffect: map[string]string{
			"server.addr":             g.Addr,
			"ollama.host":             cmp.Or(g.Ollama, os.Getenv("OLLAMA_HOST"), "http://127.0.0.1:11434"),
			"server.insecure_no_auth": fmt.Sprint(g.InsecureNoAuth),
		}}
	if conn != nil {
		opts.ImportToolServers = connector.ImportToolServers(a.core.ToolServers(), srv.URL, exe)
	}
	if a.keychainProblem != nil {
		opts.KeychainProblem = agent.UserMessage(a.keychainProblem)
	}
	if a.noModel {
		opts.Notice = desktop.NoModelNotice
	}

	// The HTTP server's failure, if it is why the app quits.
	if err := launch.Run(ctx, desktop.CoreOf(a.core), opts, srv.Failed()); err != nil {
		a.log.Error("HTTP server stopped", "err", err)
		return agent.Userf(err, "the MCP endpoint %s stopped serving", srv.URL)
	}
	return nil
}
