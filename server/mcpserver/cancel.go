package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// errClientCancelled is why a turn stopped when its client cancelled it.
var errClientCancelled = &agent.UserError{Msg: "the client cancelled the call; the turn was stopped"}

type legacyCallKey struct{}

// followLegacyCall ties a legacy tools/call to its session and request id,
// so that the session's notifications/cancelled can stop the turn (the
// turn itself ignores a dropped connection, as that revision expects);
// and it acts on such a notification.
func (s *Server) followLegacyCall(r *http.Request, msg mcpfill.Peek) *http.Request {
	sid := r.Header.Get(server.HeaderKeySessionID)
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		if len(msg.ID) > 0 && sid != "" {
			return r.WithContext(context.WithValue(r.Context(), legacyCallKey{}, callKey(sid, msg.ID)))
		}
	case string(mcp.MethodNotificationCancelled):
		s.mu.Lock()
		cancel := s.legacyCalls[callKey(sid, msg.Params.RequestID)]
		s.mu.Unlock()
		if cancel != nil {
			cancel(errClientCancelled)
		}
	}
	return r
}

func callKey(sessionID string, id json.RawMessage) string {
	return sessionID + "\x00" + string(bytes.TrimSpace(id))
}

// legacyTurnContext is the context a legacy call's turn runs in: not ended
// by the connection, but by the session's notifications/cancelled; over
// stdio, by the call's own context, which mcp-go ends on that notification.
// done must be called when the turn ends.
func (s *Server) legacyTurnContext(ctx context.Context) (turnCtx context.Context, done func()) {
	if legacySessionID(ctx) == stdioSessionID {
		return ctx, func() {}
	}
	turnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	key, ok := ctx.Value(legacyCallKey{}).(string)
	if !ok {
		return turnCtx, func() { cancel(nil) }
	}
	s.mu.Lock()
	s.legacyCalls[key] = cancel
	s.mu.Unlock()
	return turnCtx, func() {
		s.mu.Lock()
		delete(s.legacyCalls, key)
		s.mu.Unlock()
		cancel(nil)
	}
}
