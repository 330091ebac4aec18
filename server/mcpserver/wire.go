package mcpserver

import (
	"net/http"
	"time"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// DefaultBodyTimeout is how long a request body may take to arrive once
// its headers are in. Bodies are at most MaxBodyBytes and come from this
// computer, where they take milliseconds; 30 s still lets a whole 4 MiB
// body through a 1.1 Mbit/s link (an allow-listed remote host). A client
// that trickles its body is cut off then, and the request slot it holds
// is freed.
const DefaultBodyTimeout = 30 * time.Second

// DefaultKeepAlive is how often a call that waits gets an SSE comment, so
// proxies and clients do not take a quiet stream for a dead one.
const DefaultKeepAlive = 15 * time.Second

// keepAlive is Options.KeepAlive with its default.
func (s *Server) keepAlive() time.Duration {
	if s.opts.KeepAlive == 0 {
		return DefaultKeepAlive
	}
	return s.opts.KeepAlive
}

// bodyTimeout is Options.BodyTimeout with its default; 0: none.
func (s *Server) bodyTimeout() time.Duration {
	switch {
	case s.opts.BodyTimeout == 0:
		return DefaultBodyTimeout
	case s.opts.BodyTimeout < 0:
		return 0
	}
	return s.opts.BodyTimeout
}

// bodyDeadline bounds the time a body takes to arrive
// (mcpfill.BodyDeadline). It comes first, ahead of the guard, since the
// guard reads chunked bodies itself.
func bodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return mcpfill.BodyDeadline(timeout, next)
}
