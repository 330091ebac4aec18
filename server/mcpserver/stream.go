package mcpserver

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
)

// DefaultKeepAlive is how often a call that waits gets an SSE comment, so
// proxies and clients do not take a quiet stream for a dead one.
const DefaultKeepAlive = 15 * time.Second

// callStream wraps the response writer of a tools/call POST. Notify
// writes the call's notifications on it directly, as events, so none is
// lost: mcp-go's own forwarder drops a notification it holds when the
// answer goes out first, and on a legacy session the forwarder of an
// earlier call can take one and drop it (notes: mcp-go §6). It also sends
// an SSE comment every keepAlive while the call waits. Either opens the
// event stream when mcp-go has not, and mcp-go's JSON answer is then sent
// as an event.
type callStream struct {
	w         http.ResponseWriter
	flusher   http.Flusher
	canStream bool // the client accepts text/event-stream

	mu      sync.Mutex
	started bool // the event stream is open (by mcp-go or by us)
	ours    bool // we opened it: mcp-go's JSON answer becomes an event
	headers bool // the status line is out (mcp-go's WriteHeader is ignored once ours)
	body    bytes.Buffer
}

type callStreamKey struct{}

func streamFrom(ctx context.Context) *callStream {
	cs, _ := ctx.Value(callStreamKey{}).(*callStream)
	return cs
}

// withCallStream serves r with w wrapped; keepAlive > 0 sends comments on
// a tools/call whose client accepts an event stream.
func withCallStream(w http.ResponseWriter, r *http.Request, keepAlive time.Duration, serve func(http.ResponseWriter, *http.Request)) {
	f, ok := w.(http.Flusher)
	if !ok {
		serve(w, r)
		return
	}
	cs := &callStream{w: w, flusher: f, canStream: strings.Contains(r.Header.Get("Accept"), "text/event-stream")}
	r = r.WithContext(context.WithValue(r.Context(), callStreamKey{}, cs))
	if keepAlive <= 0 || !cs.canStream {
		serve(cs, r)
		cs.finish()
		return
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-r.Context().Done():
				return
			case <-t.C:
				cs.keepAlive()
			}
		}
	})
	serve(cs, r)
	close(done)
	wg.Wait()
	cs.finish()
}

func (cs *callStream) Header() http.Header { return cs.w.Header() }

func (cs *callStream) WriteHeader(code int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.headers = true
	if cs.ours {
		return
	}
	if strings.HasPrefix(cs.w.Header().Get("Content-Type"), "text/event-stream") {
		cs.started = true
	}
	cs.w.WriteHeader(code)
}

func (cs *callStream) Write(b []byte) (int, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ours && !isSSE(b) {
		// mcp-go's JSON answer, meant for a plain response.
		return cs.body.Write(b)
	}
	if !cs.headers && !cs.ours {
		cs.headers = true
		if strings.HasPrefix(cs.w.Header().Get("Content-Type"), "text/event-stream") {
			cs.started = true
		}
	}
	return cs.w.Write(b)
}

func isSSE(b []byte) bool {
	return bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte(":"))
}

func (cs *callStream) Flush() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.flusher.Flush()
}

func (cs *callStream) Unwrap() http.ResponseWriter { return cs.w }

// openLocked makes sure the event stream is open; false when mcp-go has
// already begun a plain JSON answer. cs.mu is held.
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
	cs.w.WriteHeader(http.StatusOK)
	cs.started, cs.ours, cs.headers = true, true, true
	return true
}

// keepAlive writes an SSE comment.
func (cs *callStream) keepAlive() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.openLocked() {
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
	if _, err := fmt.Fprintf(cs.w, "event: message\ndata: %s\n\n", data); err != nil {
		return err
	}
	cs.flusher.Flush()
	return nil
}

var errNoStream = errors.New("the client takes no event stream")

// finish sends mcp-go's JSON answer as an event on a stream we opened.
func (cs *callStream) finish() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.ours || cs.body.Len() == 0 {
		return
	}
	_, _ = cs.w.Write([]byte("event: message\ndata: "))
	_, _ = cs.w.Write(bytes.TrimRight(cs.body.Bytes(), "\n"))
	_, _ = cs.w.Write([]byte("\n\n"))
	cs.flusher.Flush()
}
