package mcpserver

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
	// resumption (resume.go): open, detached from their response by the
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
	// holding DefaultMaxKeptStreams typical streams (keptStreamBytes
	// bounds each).
	DefaultMaxKeptBytes = 16 << 20
	// DefaultMaxKeptBytesPerClient is one client's share of those bytes: a
	// quarter, four streams at their bound.
	DefaultMaxKeptBytesPerClient = 4 << 20
)

// limitHit tells which limit refused a request.
type limitHit int

const (
	withinLimits limitHit = iota
	clientLimit           // the client's share is used up
	totalLimit            // the total cap is reached
)

// quota counts what clients hold of one resource against a total cap and
// a per-client share.
type quota struct {
	total, perClient int

	mu   sync.Mutex
	used int
	by   map[string]int // principal → units held
}

// newQuota makes a quota; a share larger than the total is the total.
func newQuota(total, perClient int) *quota {
	return &quota{total: total, perClient: min(perClient, total), by: make(map[string]int)}
}

// take holds one unit for the principal unless its share or the total is
// used up.
func (q *quota) take(principal string) limitHit {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.by[principal] >= q.perClient:
		return clientLimit
	case q.used >= q.total:
		return totalLimit
	}
	q.by[principal]++
	q.used++
	return withinLimits
}

// give returns a unit the principal took.
func (q *quota) give(principal string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.by[principal]--; q.by[principal] <= 0 {
		delete(q.by, principal)
	}
	q.used--
}

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

// limitRequests serves a request only within the limits on requests in
// progress and, among them, open streams; beyond them it answers at once,
// 429 when the client used up its share and 503 when all clients together
// reached the total, with Retry-After and a message naming the limit.
func (s *Server) limitRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := PrincipalFrom(r.Context())
		switch s.inFlight.take(principal) {
		case clientLimit:
			refuse(w, http.StatusTooManyRequests, 1, fmt.Sprintf("Too many requests in progress for this client: %d at once is the limit for each client. Wait for some to finish, then retry.", s.inFlight.perClient))
			return
		case totalLimit:
			refuse(w, http.StatusServiceUnavailable, 1, fmt.Sprintf("Too many requests in progress: %d at once is Deskhand's limit for all clients together. Retry in a moment.", s.inFlight.total))
			return
		}
		defer s.inFlight.give(principal)
		if isStream(r) {
			switch s.openStreams.take(principal) {
			case clientLimit:
				refuse(w, http.StatusTooManyRequests, 5, fmt.Sprintf("Too many open streams for this client: %d at once (GET /mcp and subscriptions/listen) is the limit for each client. Close the streams you no longer use, then retry.", s.openStreams.perClient))
				return
			case totalLimit:
				refuse(w, http.StatusServiceUnavailable, 5, fmt.Sprintf("Too many open streams: %d at once (GET /mcp and subscriptions/listen) is Deskhand's limit for all clients together. Retry later.", s.openStreams.total))
				return
			}
			defer s.openStreams.give(principal)
		}
		next.ServeHTTP(w, r)
	})
}

// shelf keeps ids for clients, each client's oldest first, within a total
// and a per-client share. Unlike a quota it never refuses: what is put on
// it pushes out the oldest of the same client when over its share and,
// when over the total, the oldest of the client that holds the most (the
// oldest of all among equals), so that a client within its share loses
// nothing to one that is not.
type shelf struct {
	total, perClient int

	n   int
	seq uint64
	by  map[string][]shelved // principal → oldest first
}

type shelved struct {
	id    string
	until time.Time // when it expires
	seq   uint64    // when it was put on the shelf
}

// pushedOut is what put pushed out, and which limit did.
type pushedOut struct {
	principal, id string
	until         time.Time
	hit           limitHit
}

// newShelf makes a shelf; a share larger than the total is the total.
func newShelf(total, perClient int) *shelf {
	return &shelf{total: total, perClient: min(perClient, total), by: make(map[string][]shelved)}
}

// put adds id as the principal's newest, kept until until, and returns
// what it pushed out.
func (s *shelf) put(principal, id string, until time.Time) []pushedOut {
	s.seq++
	s.by[principal] = append(s.by[principal], shelved{id: id, until: until, seq: s.seq})
	s.n++
	var out []pushedOut
	for len(s.by[principal]) > s.perClient {
		out = append(out, s.popOldest(principal, clientLimit))
	}
	for s.n > s.total {
		out = append(out, s.popOldest(s.largest(), totalLimit))
	}
	return out
}

// largest is the client holding the most; among equals, the one holding
// the oldest.
func (s *shelf) largest() string {
	var who string
	for p, held := range s.by {
		most := s.by[who]
		if who == "" || len(held) > len(most) || (len(held) == len(most) && held[0].seq < most[0].seq) {
			who = p
		}
	}
	return who
}

func (s *shelf) popOldest(principal string, hit limitHit) pushedOut {
	held := s.by[principal]
	out := pushedOut{principal: principal, id: held[0].id, until: held[0].until, hit: hit}
	if len(held) == 1 {
		delete(s.by, principal)
	} else {
		held[0] = shelved{}
		s.by[principal] = held[1:]
	}
	s.n--
	return out
}

// expire takes off the shelf what expired before now, and returns its ids.
func (s *shelf) expire(now time.Time) []string {
	var ids []string
	for p, held := range s.by {
		held = slices.DeleteFunc(held, func(e shelved) bool {
			if now.After(e.until) {
				ids = append(ids, e.id)
				return true
			}
			return false
		})
		if len(held) == 0 {
			delete(s.by, p)
		} else {
			s.by[p] = held
		}
	}
	s.n -= len(ids)
	return ids
}

func refuse(w http.ResponseWriter, status, retryAfter int, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	http.Error(w, msg, status)
}
