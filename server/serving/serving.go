// Package serving starts what serves a core to the outside, the MCP
// endpoint over HTTP and the local control channel, and stops them in the
// order that loses nothing: no new connections, then the core's turns
// ended and recorded, then the streams and the servers.
package serving

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// Options say where and how to serve.
type Options struct {
	Data           string // the data folder, where the control channel is
	Addr           string // the MCP address asked for
	InsecureNoAuth bool   // open local development: no token needed
	Version        string
	StateKeys      string // DESKHAND_STATE_KEYS (mcpserver.OptionsFrom)
	// Bind makes the MCP endpoint's listeners (mcpserver.Listen).
	Bind func() ([]net.Listener, error)
	// Show brings a window forward for a second launch; nil: none.
	Show func() bool
	// Served is told the addresses served at, which no agent may fetch.
	Served func(addrs ...string)
	Log    *slog.Logger
	// Out gets the lines that say where the agents are served.
	Out io.Writer
}

// Running is the MCP endpoint and the control channel, serving.
type Running struct {
	URL    string
	failed <-chan error
	stop   func()
}

// Failed tells when the HTTP server stopped by itself.
func (r *Running) Failed() <-chan error { return r.failed }

// Stop stops accepting, ends the core's turns (recorded interrupted),
// then waits for the streams and the servers.
func (r *Running) Stop() { r.stop() }

// Start serves core's agents on the MCP endpoint and opens the control
// channel.
func Start(ctx context.Context, core *agent.Core, opts Options) (*Running, error) {
	log := opts.Log
	mopts, err := mcpserver.OptionsFrom(ctx, core.Settings(), opts.Version, opts.StateKeys, log)
	if err != nil {
		return nil, err
	}
	mopts.Guard.InsecureNoAuth = opts.InsecureNoAuth
	mcp, err := mcpserver.New(mcpserver.CoreOf(core), mopts)
	if err != nil {
		return nil, agent.Userf(err, "DESKHAND_STATE_KEYS is not usable")
	}
	bind := opts.Bind
	if bind == nil {
		bind = func() ([]net.Listener, error) {
			return mcpserver.Listen(opts.Addr, opts.InsecureNoAuth, mcpserver.PortUser)
		}
	}
	listeners, err := bind()
	if err != nil {
		return nil, err
	}
	url := "http://" + listeners[0].Addr().String() + mcpserver.EndpointPath
	served := []string{opts.Addr}
	for _, ln := range listeners {
		served = append(served, ln.Addr().String())
	}
	opts.Served(served...)
	// For 'deskhand connect' while the app is stopped.
	if err := core.Settings().Set(ctx, agent.SettingLastURL, url); err != nil {
		log.Warn("remember the endpoint", "err", err)
	}
	ctl, err := control.Listen(control.SocketPath(opts.Data), control.CoreOf(core), control.Options{URL: url, Show: opts.Show})
	if err != nil {
		for _, ln := range listeners {
			ln.Close()
		}
		if errors.Is(err, control.ErrAlreadyRunning) {
			return nil, agent.Userf(err, "Deskhand is already running with the data folder %s", opts.Data)
		}
		return nil, err
	}
	httpSrv := mcp.Serve(listeners)
	fmt.Fprintf(opts.Out, "Deskhand %s is serving your agents at %s\n", opts.Version, url)
	fmt.Fprintf(opts.Out, "Data folder: %s\n", opts.Data)
	if opts.InsecureNoAuth {
		fmt.Fprintln(opts.Out, "WARNING: open local development mode (--insecure-no-auth): MCP requests need no token.")
	} else {
		fmt.Fprintln(opts.Out, "Clients need a token: run 'deskhand token create NAME' and send 'Authorization: Bearer <token>'.")
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopInOrder(ctx, log, listeners, core, []namedStop{
			{"stop the MCP endpoint", httpSrv.Shutdown},
			{"close control channel", ctl.Close},
		})
	}
	return &Running{URL: url, failed: httpSrv.Failed(), stop: stop}, nil
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
