package mcpfill

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// LegacyCalls lets a legacy client's notifications/cancelled stop the
// work of its tools/call over HTTP, where that work is not tied to the
// connection: the work of a 2025-11-25 call ignores a dropped connection,
// as that revision expects, and mcp-go does not deliver the notification
// to a handler.
type LegacyCalls struct {
	// Cancelled is the cause the work of a cancelled call is given.
	Cancelled error

	mu    sync.Mutex
	calls map[string]context.CancelCauseFunc // by session and request id
}

type legacyCallKey struct{}

// Follow ties a legacy tools/call to its session and request id, so that
// the session's notifications/cancelled can stop it; and it acts on such
// a notification.
func (lc *LegacyCalls) Follow(r *http.Request, msg Peek) *http.Request {
	sid := r.Header.Get(server.HeaderKeySessionID)
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		if len(msg.ID) > 0 && sid != "" {
			return r.WithContext(context.WithValue(r.Context(), legacyCallKey{}, callKey(sid, msg.ID)))
		}
	case string(mcp.MethodNotificationCancelled):
		lc.mu.Lock()
		cancel := lc.calls[callKey(sid, msg.Params.RequestID)]
		lc.mu.Unlock()
		if cancel != nil {
			cancel(lc.Cancelled)
		}
	}
	return r
}

func callKey(sessionID string, id json.RawMessage) string {
	return sessionID + "\x00" + string(bytes.TrimSpace(id))
}

// WorkContext is the context the work of a legacy call runs in: not ended
// by the connection, but by the session's notifications/cancelled; over
// stdio, by the call's own context, which mcp-go ends on that
// notification. done must be called when the work ends.
func (lc *LegacyCalls) WorkContext(ctx context.Context) (workCtx context.Context, done func()) {
	if LegacySessionID(ctx) == StdioSessionID {
		return ctx, func() {}
	}
	workCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	key, ok := ctx.Value(legacyCallKey{}).(string)
	if !ok {
		return workCtx, func() { cancel(nil) }
	}
	lc.mu.Lock()
	if lc.calls == nil {
		lc.calls = make(map[string]context.CancelCauseFunc)
	}
	lc.calls[key] = cancel
	lc.mu.Unlock()
	return workCtx, func() {
		lc.mu.Lock()
		delete(lc.calls, key)
		lc.mu.Unlock()
		cancel(nil)
	}
}

// Len is how many calls a notifications/cancelled can stop (tests).
func (lc *LegacyCalls) Len() int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return len(lc.calls)
}

// LegacySessionID is the MCP session of a legacy-era request ("" on the
// modern era, which has no sessions).
func LegacySessionID(ctx context.Context) string {
	if server.IsModernRequest(ctx) {
		return ""
	}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

// ClientCapabilities returns what the calling client declared: per
// request on the modern era, at initialize on the legacy one. mcp-go does
// not check them before sending requests to the client, so callers do.
func ClientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}
