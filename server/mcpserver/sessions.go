package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Sessions of the 2025-11-25 era and before. mcp-go mints a session's id
// at initialize (and for a GET stream opened without one), and forgets
// the session on DELETE, when it has been idle for SessionIdleTTL, or, for
// a GET's, when that stream ends. legacySessions is its session id
// manager, so it sees each of these moments: it counts every session
// against the limits from the moment its id is minted, knows who opened
// it, and keeps what Deskhand holds per session (the conversation it
// continues with each agent), which goes with it.
type legacySessions struct {
	slots *mcpfill.Quota
	ttl   time.Duration

	mu    sync.Mutex
	live  map[string]*legacySession
	ended func(sid string) // tests: called when a session ends
}

type legacySession struct {
	owner   string
	counted bool              // holds one of slots
	conv    map[string]string // agent slug → conversation handle
}

// sessionSlot is a place for one session, reserved before mcp-go mints
// its id; the id manager fills it.
type sessionSlot struct {
	principal string
	filled    bool // under legacySessions.mu
}

type sessionSlotKey struct{}

// reserve takes a place for a session of the principal, if within limits.
func (ls *legacySessions) reserve(principal string) (*sessionSlot, mcpfill.LimitHit) {
	if hit := ls.slots.Take(principal); hit != mcpfill.WithinLimits {
		return nil, hit
	}
	return &sessionSlot{principal: principal}, mcpfill.WithinLimits
}

// release gives back a place no session took.
func (ls *legacySessions) release(slot *sessionSlot) {
	ls.mu.Lock()
	filled := slot.filled
	slot.filled = true // never twice
	ls.mu.Unlock()
	if !filled {
		ls.slots.Give(slot.principal)
	}
}

// refusal says which session limit was hit and what to do.
func (ls *legacySessions) refusal(hit mcpfill.LimitHit) string {
	what := fmt.Sprintf("This client already has %d open MCP sessions, the most one client may hold", ls.slots.PerClient)
	if hit == mcpfill.TotalLimit {
		what = fmt.Sprintf("Deskhand already holds %d MCP sessions, its limit for all clients together", ls.slots.Total)
	}
	return fmt.Sprintf("%s. Close unused sessions (DELETE /mcp with their Mcp-Session-Id) or retry later; a session idle for %s ends by itself.", what, ls.ttl)
}

// owner reports who opened the session, if it is live.
func (ls *legacySessions) owner(sid string) (string, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		return s.owner, true
	}
	return "", false
}

// conversation is the conversation the session continues with the agent.
func (ls *legacySessions) conversation(sid, slug string) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		return s.conv[slug]
	}
	return ""
}

// setConversation notes the conversation the session continues with the
// agent; nothing if the session ended meanwhile.
func (ls *legacySessions) setConversation(sid, slug, handle string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if s := ls.live[sid]; s != nil {
		if s.conv == nil {
			s.conv = make(map[string]string)
		}
		s.conv[slug] = handle
	}
}

// stdioSessionID is mcp-go's id of its stdio session.
const stdioSessionID = "stdio"

// open makes a session live that mcp-go did not mint through the id
// manager (stdio's), outside the limits; close ends it.
func (ls *legacySessions) open(sid, owner string) (close func()) {
	ls.mu.Lock()
	ls.live[sid] = &legacySession{owner: owner}
	ls.mu.Unlock()
	return func() { ls.end(sid) }
}

// end forgets a session and gives back its place; ending one that is not
// live does nothing.
func (ls *legacySessions) end(sid string) {
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

// count reports the live sessions, and how many of them continue a
// conversation (tests).
func (ls *legacySessions) count() (live, withConversations int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, s := range ls.live {
		if len(s.conv) > 0 {
			withConversations++
		}
	}
	return len(ls.live), withConversations
}

// ResolveSessionIdManager implements server.SessionIdManagerResolver: the
// manager it returns knows the request, hence who opens the session and
// the place reserved for it. r is nil for mcp-go's idle sweep.
func (ls *legacySessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	return sessionIDs{ls: ls, r: r}
}

// sessionIDs is mcp-go's session id manager for one request: stateful,
// and without the tombstones mcp-go's own keeps of every ended session.
// An ended session's id is unknown like one never issued: 404 either way,
// and the client initializes again.
type sessionIDs struct {
	ls *legacySessions
	r  *http.Request
}

const sessionIDPrefix = "mcp-session-"

func (m sessionIDs) Generate() string {
	sid := sessionIDPrefix + uuid.NewString()
	s := &legacySession{}
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
	m.ls.end(sid)
	return false, nil
}

// admitSession reserves a place for the session mcp-go is about to mint
// for r; ok is false when it has refused the request instead, saying which
// limit was hit. done gives back a place no session took.
func (s *Server) admitSession(w http.ResponseWriter, r *http.Request, id []byte) (_ *http.Request, done func(), ok bool) {
	slot, hit := s.sessions.reserve(PrincipalFrom(r.Context()))
	if hit != mcpfill.WithinLimits {
		msg := s.sessions.refusal(hit)
		if r.Method == http.MethodGet {
			mcpfill.Refuse(w, http.StatusServiceUnavailable, 60, msg)
			return r, nil, false
		}
		// An initialize: a JSON-RPC error, in a 200 as that era has it (a
		// 4xx would make clients retry with the old HTTP+SSE transport and
		// hide the message).
		limit := "sessions per client"
		if hit == mcpfill.TotalLimit {
			limit = "sessions"
		}
		mcpfill.WriteErrorStatus(w, http.StatusOK, id, mcp.INVALID_REQUEST, msg, map[string]any{"limit": limit})
		return r, nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, slot)), func() { s.sessions.release(slot) }, true
}

// bindSessions binds each legacy MCP session to the principal that opened
// it: another principal presenting the id is told it does not exist, as
// is a stream asked for on a session that ended (mcp-go would open one on
// any id, a session of its own that nothing counts). A stream opened
// without a session gets a place of its own.
func (s *Server) bindSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := PrincipalFrom(r.Context())
		sid := r.Header.Get(server.HeaderKeySessionID)
		legacyGET := r.Method == http.MethodGet && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		if sid == "" {
			if legacyGET {
				var done func()
				var ok bool
				if r, done, ok = s.admitSession(w, r, nil); !ok {
					return
				}
				defer done()
			}
			next.ServeHTTP(w, r)
			return
		}
		owner, live := s.sessions.owner(sid)
		if (live && owner != principal) || (!live && legacyGET) {
			http.Error(w, "Session not found: it ended (closed, or idle too long) or was never opened; initialize a new one", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodGet {
			s.mu.Lock()
			s.listeners[sid]++
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				if s.listeners[sid]--; s.listeners[sid] <= 0 {
					delete(s.listeners, sid)
				}
				s.mu.Unlock()
			}()
		}
		next.ServeHTTP(w, r)
	})
}
