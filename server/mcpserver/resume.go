package mcpserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// retryMillis is the reconnection delay a resumable stream asks for.
const retryMillis = 1000

// Bounds on kept streams: an ended one is kept this long for a client to
// resume (it reconnects after retryMillis), and at most keptStreams are
// kept (the oldest ended go first), since each holds its call's answer.
const (
	keptFor     = 2 * time.Minute
	keptStreams = 256
)

// resumable is one call's event stream, kept for resumption.
type resumable struct {
	id, principal string

	mu      sync.Mutex
	events  [][]byte // each with its "id:" line
	ended   time.Time
	changed chan struct{} // closed at each event and at the end
}

func (r *resumable) eventID(seq int) string { return r.id + "." + strconv.Itoa(seq) }

// add numbers and keeps an event, returning it with its id.
func (r *resumable) add(ev []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	full := append([]byte("id: "+r.eventID(len(r.events)+1)+"\n"), ev...)
	r.events = append(r.events, full)
	close(r.changed)
	r.changed = make(chan struct{})
	return full
}

func (r *resumable) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended.IsZero() {
		r.ended = time.Now()
		close(r.changed)
		r.changed = make(chan struct{})
	}
}

// after returns the events after seq, whether the stream ended, and a
// channel closed at the next change.
func (r *resumable) after(seq int) ([][]byte, bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	if seq < len(r.events) {
		out = r.events[max(seq, 0):]
	}
	return out, !r.ended.IsZero(), r.changed
}

// resumables keeps the resumable streams of this server.
type resumables struct {
	mu      sync.Mutex
	streams map[string]*resumable
}

func newResumables() *resumables { return &resumables{streams: make(map[string]*resumable)} }

func (rs *resumables) open(principal string) *resumable {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	oldest, oldestEnded := "", time.Time{}
	for id, r := range rs.streams {
		r.mu.Lock()
		ended := r.ended
		r.mu.Unlock()
		switch {
		case ended.IsZero():
		case now.Sub(ended) > keptFor:
			delete(rs.streams, id)
		case oldest == "" || ended.Before(oldestEnded):
			oldest, oldestEnded = id, ended
		}
	}
	if len(rs.streams) >= keptStreams && oldest != "" {
		delete(rs.streams, oldest)
	}
	r := &resumable{id: newID(), principal: principal, changed: make(chan struct{})}
	rs.streams[r.id] = r
	return r
}

// find parses a Last-Event-ID of ours.
func (rs *resumables) find(lastEventID string) (*resumable, int, bool) {
	id, seqText, ok := strings.Cut(lastEventID, ".")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 {
		return nil, 0, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.streams[id]
	return r, seq, ok
}

// resume serves a GET with the Last-Event-ID of one of our streams: the
// events after it, then those still to come, until the call's answer. ok
// is false when the id is not ours (mcp-go's GET stream then serves it).
func (s *Server) resume(w http.ResponseWriter, r *http.Request) bool {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		return false
	}
	stream, seq, ok := s.streams.find(last)
	if !ok || stream.principal != PrincipalFrom(r.Context()) {
		return false
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "Streaming unsupported", http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "retry: %d\n\n", retryMillis)
	flusher.Flush()
	for {
		events, ended, changed := stream.after(seq)
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
				return true
			}
			seq++
		}
		flusher.Flush()
		if ended {
			return true
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return true
		}
	}
}
