package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/serving"
	"github.com/deskhand/deskhand/ui/cli"
)

// boot starts what serve and stdio share: logs on stderr, a context that
// ends on SIGINT or SIGTERM, and the opened app with its default agent
// (made on first start; --model applies to it).
func (p program) boot(ctx context.Context, g *cli.Globals, stderr io.Writer, desktop bool) (context.Context, *wiring, func(), error) {
	log, redact := newLog(stderr, slog.LevelInfo)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	a, err := p.open(ctx, g, log, redact, desktop)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	cleanup := func() { a.close(); stop() }
	assistant, ok, err := a.core.Agents().EnsureDefault(ctx, g.Model)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	a.noModel = ok && assistant.Model == ""
	return ctx, a, cleanup, nil
}

// serve serves the agents headless until ctx ends or a signal comes; it
// fails when the HTTP server stops by itself.
func (p program) serve(ctx context.Context, g cli.Globals, stderr io.Writer) error {
	return p.serveOn(ctx, g, stderr, listen)
}

// serveOn is serve on the listeners bind makes for the MCP endpoint.
func (p program) serveOn(ctx context.Context, g cli.Globals, stderr io.Writer, bind func(cli.Globals) ([]net.Listener, error)) error {
	ctx, a, cleanup, err := p.boot(ctx, &g, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	srv, err := startServing(ctx, g, a, stderr, nil, bind)
	if err != nil {
		return err
	}
	defer srv.Stop()
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
		return nil
	case err = <-srv.Failed():
		a.log.Error("HTTP server stopped", "err", err)
		return agent.Userf(err, "the MCP endpoint %s stopped serving", srv.URL)
	}
}

// startServing serves the app's agents (serving.Start), on the listeners
// bind makes; show (may be nil) brings a window forward for a second
// launch.
func startServing(ctx context.Context, g cli.Globals, a *wiring, stderr io.Writer, show func() bool, bind func(cli.Globals) ([]net.Listener, error)) (*serving.Running, error) {
	a.keychainProblem = a.keychain.Report(a.log)
	a.connector.Report(ctx, a.core.Providers(), a.log)
	return serving.Start(ctx, a.core, serving.Options{Data: g.Data, Addr: g.Addr, InsecureNoAuth: g.InsecureNoAuth, Version: version,
		StateKeys: os.Getenv("DESKHAND_STATE_KEYS"), Bind: func() ([]net.Listener, error) { return bind(g) }, Show: show,
		Served: func(addrs ...string) { a.unreachable.Set("deskhand", addrs...) }, Log: a.log, Out: stderr})
}

// listen binds the MCP address (mcpserver.Listen), naming the program
// that holds a port taken.
func listen(g cli.Globals) ([]net.Listener, error) {
	return mcpserver.Listen(g.Addr, g.InsecureNoAuth, mcpserver.PortUser)
}

// serveStdio serves the agents in-process over stdin and stdout, for a
// stdio client when the app is not running: as the named client, so that
// it sees what that client sees, or as this computer's own.
func (p program) serveStdio(ctx context.Context, g cli.Globals, client string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, a, cleanup, err := p.boot(ctx, &g, stderr, false)
	if err != nil {
		return err
	}
	defer cleanup()
	mcp, err := mcpserver.New(mcpserver.CoreOf(a.core), mcpserver.Options{Info: mcpserver.InfoFrom(ctx, a.core.Settings(), version, a.log), Logger: a.log})
	if err != nil {
		return err
	}
	defer mcp.Close(context.Background())
	err = mcp.ServeStdio(ctx, a.core.Clients().Principal(client), stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
