package mcpfill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// callStream wraps the response writer of a tools/call POST. Notify
// writes the call's notifications on it directly, as events, so none is
// lost: mcp-go's own forwarder drops a notification it holds when the
// answer goes out first, and on a legacy session the forwarder of an
// earlier call can take one and drop it (notes: mcp-go §6). It also sends
// an SSE comment every keepAlive while the call waits. Either opens the
// event stream when mcp-go has not, and mcp-go's JSON answer is then sent
// as an event.
//
// On a 2025-11-25 session the stream is resumable (SEP-1699): it opens
// with a priming event (an id, a retry interval, no data), every event
// carries an id and is kept, and a client that lost the stream gets the
// rest, the answer included, with a GET carrying Last-Event-ID.
type callStream struct {
	w         http.ResponseWriter
	flusher   http.Flusher
	canStream bool        // the client accepts text/event-stream
	streams   *Resumables // where a resumable stream is kept; nil: not resumable
	principal string

	mu       sync.Mutex
	started  bool // the event stream is open (by mcp-go or by us)
	ours     bool // we opened it: mcp-go's JSON answer becomes an event
	headers  bool // the status line is out (mcp-go's WriteHeader is ignored once ours)
	body     bytes.Buffer
	kept     *resumable    // the stream's events, when resumable
	detached bool          // the response ended: events are only kept
	detach   chan struct{} // closed to end the response mid-call
}

type callStreamKey struct{}

func streamFrom(ctx context.Context) *callStream {
	cs, _ := ctx.Value(callStreamKey{}).(*callStream)
	return cs
}

// WithCallStream serves a tools/call POST, r, with w wrapped: the call's
// notifications (Notify) are written on its own event stream. keepAlive > 0 sends comments on
// a call whose client accepts an event stream; streams, when set, keeps
// the stream for resumption, and the call then outlives its connection
// so that its answer can be resumed.
func WithCallStream(w http.ResponseWriter, r *http.Request, keepAlive time.Duration, streams *Resumables, serve func(http.ResponseWriter, *http.Request)) {
	f, ok := w.(http.Flusher)
	if !ok {
		serve(w, r)
		return
	}
	cs := &callStream{w: w, flusher: f, canStream: strings.Contains(r.Header.Get("Accept"), "text/event-stream"),
		principal: PrincipalFrom(r.Context())}
	conn := r.Context()
	ctx := context.WithValue(conn, callStreamKey{}, cs)
	if cs.canStream && streams != nil {
		cs.streams, cs.detach = streams, make(chan struct{})
		ctx = context.WithoutCancel(ctx)
	}
	r = r.WithContext(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		wg.Wait()
	}()
	if keepAlive > 0 && cs.canStream {
		wg.Go(func() {
			t := time.NewTicker(keepAlive)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-conn.Done():
					return
				case <-t.C:
					cs.keepAlive()
				}
			}
		})
	}
	if cs.detach == nil {
		serve(cs, r)
		cs.finish()
		return
	}
	// A resumable call may end its response mid-call (CloseCallStream)
	// and go on; the client resumes with a GET.
	served := make(chan struct{})
	detach := cs.detach
	go func() {
		defer close(served)
		serve(cs, r)
		cs.finish()
	}()
	select {
	case <-served:
	case <-detach:
	}
}

// CloseCallStream ends the event stream of the call in ctx now, if it can
// be resumed (a 2025-11-25 session's stream, kept within the limits on
// kept streams, where it goes on counting): the call goes on, its events
// are kept, and the client gets them, the answer included, by reconnecting
// with Last-Event-ID (SEP-1699). It reports whether it did.
func CloseCallStream(ctx context.Context) bool {
	cs := streamFrom(ctx)
	if cs == nil || cs.detach == nil {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.detached || !cs.openLocked() || cs.kept == nil {
		return false
	}
	cs.detached = true
	close(cs.detach)
	return true
}

func (cs *callStream) Header() http.Header {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.detached {
		return http.Header{} // the response is gone; mcp-go may still set some
	}
	return cs.w.Header()
}

func (cs *callStream) WriteHeader(code int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ours || cs.detached {
		return
	}
	cs.headersLocked(func() { cs.w.WriteHeader(code) })
}

// headersLocked sends the status line once, noting whether mcp-go opened
// an event stream, which then begins with the priming event.
func (cs *callStream) headersLocked(send func()) {
	if cs.headers {
		return
	}
	cs.headers = true
	send()
	if strings.HasPrefix(cs.w.Header().Get("Content-Type"), "text/event-stream") {
		cs.started = true
		cs.primeLocked()
	}
}

func (cs *callStream) Write(b []byte) (int, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ours && !isSSE(b) {
		// mcp-go's JSON answer, meant for a plain response.
		return cs.body.Write(b)
	}
	if cs.detached {
		if isEvent(b) {
			_ = cs.eventLocked(b)
		}
		return len(b), nil
	}
	cs.headersLocked(func() { cs.w.WriteHeader(http.StatusOK) })
	if cs.started && isEvent(b) {
		return len(b), cs.eventLocked(b)
	}
	return cs.w.Write(b)
}

func isEvent(b []byte) bool {
	return bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte("data:"))
}

func isSSE(b []byte) bool { return isEvent(b) || bytes.HasPrefix(b, []byte(":")) }

func (cs *callStream) Flush() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.detached {
		cs.flusher.Flush()
	}
}

func (cs *callStream) Unwrap() http.ResponseWriter { return cs.w }

// openLocked makes sure the event stream is open; false when mcp-go has
// already begun a plain JSON answer.
func (cs *callStream) openLocked() bool {
	if cs.started {
		return true
	}
	if cs.headers || !cs.canStream {
		return false
	}
	h := cs.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	cs.ours = true
	cs.headersLocked(func() { cs.w.WriteHeader(http.StatusOK) })
	return true
}

// primeLocked starts a resumable stream with its priming event, if it
// can be kept within the limits.
func (cs *callStream) primeLocked() {
	if cs.streams == nil {
		return
	}
	kept, full := cs.streams.open(cs.principal)
	if kept == nil {
		// Served all the same, without resumption; a comment (which
		// clients skip) says which limit.
		_, _ = fmt.Fprintf(cs.w, ": this stream cannot be resumed: %s\n\n", full)
		cs.flusher.Flush()
		return
	}
	cs.kept = kept
	_, _ = fmt.Fprintf(cs.w, "id: %s\nretry: %d\ndata: \n\n", cs.kept.eventID(0), retryMillis)
	cs.flusher.Flush()
}

// eventLocked writes one event, numbered and kept when the stream is
// resumable. A write that fails (the client went away) loses nothing kept.
func (cs *callStream) eventLocked(ev []byte) error {
	if cs.kept != nil {
		ev = cs.kept.add(ev)
	}
	if cs.detached {
		return nil
	}
	_, err := cs.w.Write(ev)
	cs.flusher.Flush()
	return err
}

// keepAlive writes an SSE comment.
func (cs *callStream) keepAlive() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.detached && cs.openLocked() {
		_, _ = cs.w.Write([]byte(": keep-alive\n\n"))
		cs.flusher.Flush()
	}
}

// send writes msg as an event; errNoStream when the answer is plain JSON.
func (cs *callStream) send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.openLocked() {
		return errNoStream
	}
	return cs.eventLocked(fmt.Appendf(nil, "event: message\ndata: %s\n\n", data))
}

var errNoStream = errors.New("the client takes no event stream")

// Notify sends a notification to the client of the call in ctx: written
// at once on the call's own event stream when it has one (WithCallStream),
// so none is lost and it comes before the answer; through mcp-go
// otherwise (stdio).
func Notify(ctx context.Context, s *server.MCPServer, method string, params map[string]any) error {
	if cs := streamFrom(ctx); cs != nil {
		err := cs.send(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}})
		if !errors.Is(err, errNoStream) {
			return err
		}
	}
	if err := s.SendNotificationToClient(ctx, method, params); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// finish sends mcp-go's JSON answer as an event on a stream we opened, and
// ends the kept stream.
func (cs *callStream) finish() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ours && cs.body.Len() > 0 {
		_ = cs.eventLocked(fmt.Appendf(nil, "event: message\ndata: %s\n\n", bytes.TrimRight(cs.body.Bytes(), "\n")))
	}
	if cs.kept != nil {
		cs.kept.end()
	}
}
