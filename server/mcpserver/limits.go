package mcpserver

import (
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// What a client can make Deskhand hold has a total cap and a per-client
// share (a client is a principal: one bearer token), so that one client
// can never take what the others need. The defaults:
const (
	// DefaultMaxPaused bounds the turns held for clients while they wait
	// for an answer: modern-era calls paused on a question and unfinished
	// tasks, together (DESIGN §2: at most 256 paused turns). Each holds a
	// goroutine and, often, a question on the desktop.
	DefaultMaxPaused = 256
	// DefaultMaxPausedPerClient is one client's share of them: a quarter,
	// so it takes four clients at their limit to fill Deskhand, and a
	// client running many sub-agents in parallel still has room.
	DefaultMaxPausedPerClient = 64

	// DefaultMaxInFlight bounds the requests served at once.
	DefaultMaxInFlight = 256
	// DefaultMaxInFlightPerClient is one client's share of them, its open
	// streams included: a quarter again.
	DefaultMaxInFlightPerClient = 64
	// DefaultMaxStreams bounds the long-lived streams (a 2025-11-25
	// session's GET /mcp, a 2026-07-28 subscriptions/listen): half the
	// requests in flight, so idle streams never leave calls no room.
	DefaultMaxStreams = 128
	// DefaultMaxStreamsPerClient is one client's share of the streams. A
	// client needs one per session or subscription; a few dozen covers one
	// per window of an editor.
	DefaultMaxStreamsPerClient = 32

	// DefaultMaxSessions bounds the 2025-11-25-era MCP sessions. Each costs
	// mcp-go some 13 KiB (its notification queue), so the cap holds them
	// to about 14 MiB.
	DefaultMaxSessions = 1024
	// DefaultMaxSessionsPerClient is one client's share. Many clients never
	// end their sessions (no DELETE) and open new ones on each restart:
	// 64 covers a restart every 30 s within the idle TTL.
	DefaultMaxSessionsPerClient = 64

	// DefaultMaxFinishedTasks bounds the finished tasks kept for their
	// clients to read (each for DefaultTaskTTL at most). Each holds its
	// result, an agent's reply, seldom over tens of KiB: 512 hold some
	// 10 MiB.
	DefaultMaxFinishedTasks = 512
	// DefaultMaxFinishedTasksPerClient is one client's share: twice the
	// unfinished tasks it may have (DefaultMaxPausedPerClient), so a client
	// whose whole batch finishes before it polls still has room for the
	// last batch's unread results. A quarter of the total, as elsewhere.
	DefaultMaxFinishedTasksPerClient = 128

	// DefaultMaxKeptStreams bounds the 2025-11-25 call streams kept for
	// resumption (mcpfill.Resumables): open, detached from their response by the
	// tool (CloseCallStream), or ended, for keptFor. As many as requests
	// in flight (DefaultMaxInFlight), so that the calls open at once can
	// all be resumed; ended streams make room, and detached ones, which
	// no request bounds, are bounded here.
	DefaultMaxKeptStreams = 256
	// DefaultMaxKeptStreamsPerClient is one client's share: a quarter, as
	// many as its requests in flight, so every call it has open at once
	// can be resumed.
	DefaultMaxKeptStreamsPerClient = 64
	// DefaultMaxKeptBytes bounds the events of all kept streams: what
	// resumption may cost in all, a fifth of the app's 76 MiB at rest,
	// holding DefaultMaxKeptStreams typical streams
	// (mcpfill.KeptStreamBytes bounds each).
	DefaultMaxKeptBytes = 16 << 20
	// DefaultMaxKeptBytesPerClient is one client's share of those bytes: a
	// quarter, four streams at their bound.
	DefaultMaxKeptBytesPerClient = 4 << 20
)

// isStream reports whether r opens a long-lived stream: a GET of /mcp (a
// session's stream, or the resumption of a call's), or a 2026-07-28
// subscriptions/listen, known by its Mcp-Method header (mcp-go refuses a
// request whose header and body disagree).
func isStream(r *http.Request) bool {
	if r.URL.Path != EndpointPath {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return !isBrowserVisit(r)
	case http.MethodPost:
		return r.Header.Get(mcp.HeaderMethod) == string(mcp.MethodSubscriptionsListen)
	}
	return false
}

// limitRequests bounds the requests in progress and, among them, the
// open streams (mcpfill.LimitRequests).
func (s *Server) limitRequests(next http.Handler) http.Handler {
	return mcpfill.LimitRequests(s.inFlight, s.openStreams, isStream, next)
}
