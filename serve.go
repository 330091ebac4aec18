package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/ui/cli"
)

// boot starts what serve and stdio share: logs on stderr, a context that
// ends on SIGINT or SIGTERM, and the opened app with its default agent
// (made on first start; --model applies to it).
func boot(ctx context.Context, g *cli.Globals, stderr io.Writer, desktop bool) (context.Context, *wiring, func(), error) {
	log, redact := newLog(stderr, slog.LevelInfo)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	a, err := open(ctx, g, log, redact, desktop)
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
func serve(ctx context.Context, g cli.Globals, stderr io.Writer) error {
	return serveOn(ctx, g, stderr, listen)
}

// serveOn is serve on the listeners bind makes for the MCP endpoint.
func serveOn(ctx context.Context, g cli.Globals, stderr io.Writer, bind func(cli.Globals) ([]net.Listener, error)) error {
	ctx, a, cleanup, err := boot(ctx, &g, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	srv, err := startServing(ctx, g, a, stderr, nil, bind)
	if err != nil {
		return err
	}
	defer srv.stop()
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
		return nil
	case err = <-srv.failed:
		a.log.Error("HTTP server stopped", "err", err)
		return agent.Userf(err, "the MCP endpoint %s stopped serving", srv.url)
	}
}

// serving is the MCP endpoint and the control channel, running.
type serving struct {
	url    string
	failed <-chan error // the HTTP server stopped by itself
	stop   func()       // stops accepting, ends turns (recorded interrupted), then waits for streams and the servers
}

// startServing serves the app's agents on the MCP endpoint, on the
// listeners bind makes, and opens the control channel; show (may be nil)
// brings a window forward for a second launch.
func startServing(ctx context.Context, g cli.Globals, a *wiring, stderr io.Writer, show func() bool, bind func(cli.Globals) ([]net.Listener, error)) (*serving, error) {
	log := a.log
	a.keychain.Report(log)
	a.connector.Report(ctx, a.core.Providers(), log)
	opts, err := mcpserver.OptionsFrom(ctx, a.core.Settings(), version, os.Getenv("DESKHAND_STATE_KEYS"), log)
	if err != nil {
		return nil, err
	}
	opts.Guard.InsecureNoAuth = g.InsecureNoAuth
	mcp, err := mcpserver.New(mcpserver.CoreOf(a.core), opts)
	if err != nil {
		return nil, agent.Userf(err, "DESKHAND_STATE_KEYS is not usable")
	}
	listeners, err := bind(g)
	if err != nil {
		return nil, err
	}
	url := "http://" + listeners[0].Addr().String() + mcpserver.EndpointPath
	served := []string{g.Addr}
	for _, ln := range listeners {
		served = append(served, ln.Addr().String())
	}
	a.unreachable.Set("deskhand", served...)
	// For 'deskhand connect' while the app is stopped.
	if err := a.core.Settings().Set(ctx, agent.SettingLastURL, url); err != nil {
		log.Warn("remember the endpoint", "err", err)
	}
	ctl, err := control.Listen(control.SocketPath(g.Data), control.CoreOf(a.core), control.Options{URL: url, Show: show})
	if err != nil {
		for _, ln := range listeners {
			ln.Close()
		}
		if errors.Is(err, control.ErrAlreadyRunning) {
			return nil, agent.Userf(err, "Deskhand is already running with the data folder %s", g.Data)
		}
		return nil, err
	}

	httpSrv := mcp.ServeHTTP(listeners)
	fmt.Fprintf(stderr, "Deskhand %s is serving your agents at %s\n", version, url)
	fmt.Fprintf(stderr, "Data folder: %s\n", g.Data)
	if g.InsecureNoAuth {
		fmt.Fprintln(stderr, "WARNING: open local development mode (--insecure-no-auth): MCP requests need no token.")
	} else {
		fmt.Fprintln(stderr, "Clients need a token: run 'deskhand token create NAME' and send 'Authorization: Bearer <token>'.")
	}
	stop := func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopInOrder(shutdownCtx, log, listeners, a.core, []namedStop{
			{"stop the MCP endpoint", httpSrv.Shutdown},
			{"close control channel", ctl.Close},
		})
	}
	return &serving{url: url, failed: httpSrv.Failed(), stop: stop}, nil
}

// namedStop is one step of a shutdown, named for the log.
type namedStop struct {
	name string
	stop func(context.Context) error
}

// stopInOrder shuts down in the order that loses nothing: stop accepting
// connections first, then have the core refuse new turns and end the
// running ones (recorded interrupted), then wait for the rest.
func stopInOrder(ctx context.Context, log *slog.Logger, listeners []net.Listener, core interface{ Close() }, then []namedStop) {
	for _, ln := range listeners {
		if err := ln.Close(); err != nil {
			log.Warn("stop accepting connections", "addr", ln.Addr(), "err", err)
		}
	}
	core.Close()
	for _, s := range then {
		if err := s.stop(ctx); err != nil {
			log.Warn(s.name, "err", err)
		}
	}
}

// listen binds the MCP address (mcpserver.Listen), naming the program
// that holds a port taken.
func listen(g cli.Globals) ([]net.Listener, error) {
	return mcpserver.Listen(g.Addr, g.InsecureNoAuth, mcpserver.PortUser)
}

// serveStdio serves the agents in-process over stdin and stdout, for a
// stdio client when the app is not running: as the named client, so that
// it sees what that client sees, or as this computer's own.
func serveStdio(ctx context.Context, g cli.Globals, client string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, a, cleanup, err := boot(ctx, &g, stderr, false)
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
