package mcpfill

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Sessions are the MCP sessions of the 2025-11-25 era and before. mcp-go
// mints a session's id at initialize (and for a GET stream opened without
// one), and forgets the session on DELETE, when it has been idle for its
// idle TTL, or, for a GET's, when that stream ends. Sessions is its
// session id manager (server.WithSessionIdManagerResolver), so it sees
// each of these moments: it counts every session against the limits from
// the moment its id is minted, knows who opened it, counts its open GET
// streams, and keeps what the server remembers per session
// (Remember), which goes with it.
type Sessions struct {
	slots *Quota
	ttl   time.Duration

	mu        sync.Mutex
	live      map[string]*session
	listeners map[string]int   // session id → open GET streams
	ended     func(sid string) // tests: called when a session ends
}

type session struct {
	owner    string
	counted  bool              // holds one of slots
	memories map[string]string // what the server remembers for the session
}

// NewSessions counts sessions in slots; ttl is mcp-go's idle TTL, which
// refusals name.
func NewSessions(slots *Quota, ttl time.Duration) *Sessions {
	return &Sessions{slots: slots, ttl: ttl, live: make(map[string]*session), listeners: make(map[string]int)}
}

// sessionSlot is a place for one session, reserved before mcp-go mints
// its id; the id manager fills it.
type sessionSlot struct {
	principal string
	filled    bool // under Sessions.mu
}

type sessionSlotKey struct{}

// reserve takes a place for a session of the principal, if within limits.
func (ls *Sessions) reserve(principal string) (*sessionSlot, LimitHit) {
	if hit := ls.slots.Take(principal); hit != WithinLimits {
		return nil, hit
	}
	return &sessionSlot{principal: principal}, WithinLimits
}

// release gives back a place no session took.
func (ls *Sessions) release(slot *sessionSlot) {
	ls.mu.Lock()
	filled := slot.filled
	slot.filled = true // never twice
	ls.mu.Unlock()
	if !filled {
		ls.slots.Give(slot.principal)
	}
}

// refusal says which session limit was hit and what to do.
func (ls *Sessions) refusal(hit LimitHit) string {
	what := fmt.Sprintf("This client already has %d open MCP sessions, the most one client may hold", ls.slots.PerClient)
	if hit == TotalLimit {
		what = fmt.Sprintf("Deskhand already holds %d MCP sessions, its limit for all clients together", ls.slots.Total)
	}
	return fmt.Sprintf("%s. Close unused sessions (DELETE /mcp with their Mcp-Session-Id) or retry later; a session idle for %s ends by itself.", what, ls.ttl)
}

// owner reports who opened the session, if it is live.
func (ls *Sessions) owner(sid string) (string, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		return s.owner, true
	}
	return "", false
}

// Recall is what the server remembered under key for the session.
func (ls *Sessions) Recall(sid, key string) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		return s.memories[key]
	}
	return ""
}

// Remember keeps value under key for the session, until it ends; nothing
// if the session ended meanwhile.
func (ls *Sessions) Remember(sid, key, value string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		if s.memories == nil {
			s.memories = make(map[string]string)
		}
		s.memories[key] = value
	}
}

// OwnedBy lists the live sessions the principal opened.
func (ls *Sessions) OwnedBy(principal string) []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var sids []string
	for sid, s := range ls.live {
		if s.owner == principal {
			sids = append(sids, sid)
		}
	}
	return sids
}

// Listening reports whether the session has a GET stream open (mcp-go
// sends sampling requests only there).
func (ls *Sessions) Listening(sid string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.listeners[sid] > 0
}

// OnEnd calls f with the id of each session that ends (tests).
func (ls *Sessions) OnEnd(f func(sid string)) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.ended = f
}

// StdioSessionID is mcp-go's id of its stdio session.
const StdioSessionID = "stdio"

// Open makes a session live that mcp-go did not mint through the id
// manager (stdio's), outside the limits; close ends it.
func (ls *Sessions) Open(sid, owner string) (close func()) {
	ls.mu.Lock()
	ls.live[sid] = &session{owner: owner}
	ls.mu.Unlock()
	return func() { ls.End(sid) }
}

// End forgets a session and gives back its place; ending one that is not
// live does nothing. mcp-go's OnUnregisterSession hook calls it for the
// sessions it forgets without asking the id manager (a GET's own, when
// the stream ends).
func (ls *Sessions) End(sid string) {
	ls.mu.Lock()
	s := ls.live[sid]
	delete(ls.live, sid)
	ended := ls.ended
	ls.mu.Unlock()
	if s == nil {
		return
	}
	if s.counted {
		ls.slots.Give(s.owner)
	}
	if ended != nil {
		ended(sid)
	}
}

// Count reports the live sessions, how many of them the server remembers
// something for, and the GET streams open (tests).
func (ls *Sessions) Count() (live, remembering, listeners int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, s := range ls.live {
		if len(s.memories) > 0 {
			remembering++
		}
	}
	return len(ls.live), remembering, len(ls.listeners)
}

// ResolveSessionIdManager implements server.SessionIdManagerResolver: the
// manager it returns knows the request, hence who opens the session and
// the place reserved for it. r is nil for mcp-go's idle sweep.
func (ls *Sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	return sessionIDs{ls: ls, r: r}
}

// sessionIDs is mcp-go's session id manager for one request: stateful,
// and without the tombstones mcp-go's own keeps of every ended session.
// An ended session's id is unknown like one never issued: 404 either way,
// and the client initializes again.
type sessionIDs struct {
	ls *Sessions
	r  *http.Request
}

const sessionIDPrefix = "mcp-session-"

func (m sessionIDs) Generate() string {
	sid := sessionIDPrefix + uuid.NewString()
	s := &session{}
	var slot *sessionSlot
	if m.r != nil {
		s.owner = PrincipalFrom(m.r.Context())
		slot, _ = m.r.Context().Value(sessionSlotKey{}).(*sessionSlot)
	}
	m.ls.mu.Lock()
	defer m.ls.mu.Unlock()
	if slot != nil && !slot.filled && slot.principal == s.owner {
		slot.filled, s.counted = true, true
	}
	m.ls.live[sid] = s
	return sid
}

func (m sessionIDs) Validate(sid string) (isTerminated bool, err error) {
	if _, ok := m.ls.owner(sid); !ok {
		return false, fmt.Errorf("session %q not found", sid)
	}
	return false, nil
}

func (m sessionIDs) Terminate(sid string) (isNotAllowed bool, err error) {
	m.ls.End(sid)
	return false, nil
}

// Admit reserves a place for the session mcp-go is about to mint for r
// (an initialize, whose JSON-RPC id is id, or a GET without a session); ok is false when it has refused the request instead, saying which
// limit was hit. done gives back a place no session took.
func (ls *Sessions) Admit(w http.ResponseWriter, r *http.Request, id []byte) (_ *http.Request, done func(), ok bool) {
	slot, hit := ls.reserve(PrincipalFrom(r.Context()))
	if hit != WithinLimits {
		msg := ls.refusal(hit)
		if r.Method == http.MethodGet {
			Refuse(w, http.StatusServiceUnavailable, 60, msg)
			return r, nil, false
		}
		// An initialize: a JSON-RPC error, in a 200 as that era has it (a
		// 4xx would make clients retry with the old HTTP+SSE transport and
		// hide the message).
		limit := "sessions per client"
		if hit == TotalLimit {
			limit = "sessions"
		}
		WriteErrorStatus(w, http.StatusOK, id, mcp.INVALID_REQUEST, msg, map[string]any{"limit": limit})
		return r, nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, slot)), func() { ls.release(slot) }, true
}

// Bind binds each legacy MCP session to the principal that opened
// it: another principal presenting the id is told it does not exist, as
// is a stream asked for on a session that ended (mcp-go would open one on
// any id, a session of its own that nothing counts). A stream opened
// without a session gets a place of its own.
func (ls *Sessions) Bind(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := PrincipalFrom(r.Context())
		sid := r.Header.Get(server.HeaderKeySessionID)
		legacyGET := r.Method == http.MethodGet && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		if sid == "" {
			if legacyGET {
				var done func()
				var ok bool
				if r, done, ok = ls.Admit(w, r, nil); !ok {
					return
				}
				defer done()
			}
			next.ServeHTTP(w, r)
			return
		}
		owner, live := ls.owner(sid)
		if (live && owner != principal) || (!live && legacyGET) {
			http.Error(w, "Session not found: it ended (closed, or idle too long) or was never opened; initialize a new one", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodGet {
			ls.mu.Lock()
			ls.listeners[sid]++
			ls.mu.Unlock()
			defer func() {
				ls.mu.Lock()
				if ls.listeners[sid]--; ls.listeners[sid] <= 0 {
					delete(ls.listeners, sid)
				}
				ls.mu.Unlock()
			}()
		}
		next.ServeHTTP(w, r)
	})
}
