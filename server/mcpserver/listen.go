package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// closeOnce is a listener that may be closed twice: first to stop
// accepting, then by http.Server.Shutdown, which would report the second.
type closeOnce struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *closeOnce) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// Listen binds the MCP address addr: loopback only (127.0.0.1 and, where
// there is one, ::1) unless a non-loopback address is configured, which
// needs tokens on (insecureNoAuth false). When the port is taken,
// portUser (may be nil) names the program holding it, where the system
// tells. Each listener may be closed twice.
func Listen(addr string, insecureNoAuth bool, portUser func(port string) string) ([]net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, agent.Userf(err, "--addr %q is not HOST:PORT", addr)
	}
	hosts := []string{host}
	switch host {
	case "", "localhost":
		hosts = []string{"127.0.0.1", "::1"}
	default:
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			if insecureNoAuth {
				return nil, agent.Userf(nil, "refusing to serve on %s without tokens: a non-loopback address requires authentication; drop --insecure-no-auth", addr)
			}
		}
	}
	var out []net.Listener
	for i, h := range hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, port))
		if err != nil {
			if i > 0 { // ::1 is a bonus; some machines have no IPv6 loopback
				continue
			}
			addr := net.JoinHostPort(h, port)
			if user := portUserOf(portUser, port); user != "" {
				return nil, agent.Userf(err, "cannot listen on %s: the port is taken by %s; stop it or choose another port with --addr", addr, user)
			}
			// Windows says WSAEADDRINUSE, which is no EADDRINUSE; there
			// portUser names the holder instead.
			if errors.Is(err, syscall.EADDRINUSE) {
				return nil, agent.Userf(err, "cannot listen on %s: the port is taken by another program; stop it or choose another port with --addr", addr)
			}
			return nil, agent.Userf(err, "cannot listen on %s (is another program using the port? choose another with --addr)", addr)
		}
		out = append(out, &closeOnce{Listener: ln})
		if port == "0" { // keep the same port on both loopbacks
			_, port, _ = net.SplitHostPort(ln.Addr().String())
		}
	}
	return out, nil
}

func portUserOf(portUser func(string) string, port string) string {
	if portUser == nil {
		return ""
	}
	return portUser(port)
}

// Serving is the MCP endpoint served over HTTP.
type Serving struct {
	mcp        *Server
	http       *http.Server
	endStreams context.CancelFunc
	failed     chan error
}

// Serve serves the endpoint's Handler on the listeners, with the
// limits a loopback MCP endpoint needs, until Shutdown.
func (s *Server) Serve(listeners []net.Listener) *Serving {
	// Cancelled on shutdown: subscriptions/listen streams wait on it.
	base, endStreams := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// MCP headers are short (a token, a session id, a tool name): 64
		// KiB, not net/http's 1 MiB, is what a connection can make the
		// server hold before its token is checked. Bodies have a deadline
		// of their own that answers 408 (Options.BodyTimeout); a
		// WriteTimeout would cut event streams.
		MaxHeaderBytes: 64 << 10,
	}
	v := &Serving{mcp: s, http: srv, endStreams: endStreams, failed: make(chan error, len(listeners))}
	for _, ln := range listeners {
		go func() { v.failed <- srv.Serve(ln) }()
	}
	return v
}

// Failed tells when the HTTP server stopped by itself.
func (v *Serving) Failed() <-chan error { return v.failed }

// Shutdown ends the event streams, closes the MCP sessions, then shuts
// the HTTP server down; the core's turns should have ended first.
func (v *Serving) Shutdown(ctx context.Context) error {
	v.endStreams()
	return errors.Join(v.mcp.Close(ctx), v.http.Shutdown(ctx))
}
