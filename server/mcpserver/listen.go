package mcpserver

import (
	"errors"
	"net"
	"sync"
	"syscall"

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
