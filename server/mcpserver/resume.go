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

// Bounds on the bytes of kept events: keptStreamBytes for one stream,
// keptBytes for all together; beyond either, the oldest events go. A
// stream holds a call's progress notifications (a few hundred bytes each,
// the token being at most MaxProgressTokenBytes) and its answer (an
// agent's reply, seldom over tens of KiB): 1 MiB holds thousands of steps
// and a long answer. 16 MiB is what resumption may cost in all, a fifth
// of the app's 76 MiB at rest, and holds keptStreams typical streams.
const (
	keptStreamBytes = 1 << 20
	keptBytes       = 16 << 20
)

// resumable is one call's event stream, kept for resumption.
type resumable struct {
	id, principal string
	rs            *resumables

	// Guarded by rs.mu.
	events  []keptEvent // oldest first
	dropped int         // events dropped to keep within the bounds: 1..dropped
	bytes   int         // of events
	ended   time.Time
	changed chan struct{} // closed at each event and at the end
}

// keptEvent is an event with its "id:" line, and its place in the order
// events were kept in, across streams.
type keptEvent struct {
	data  []byte
	order uint64
}

func (r *resumable) eventID(seq int) string { return r.id + "." + strconv.Itoa(seq) }

// add numbers and keeps an event, returning it with its id; to stay
// within the bounds, it drops the oldest events of the stream, then the
// oldest of all.
func (r *resumable) add(ev []byte) []byte {
	rs := r.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	full := append([]byte("id: "+r.eventID(r.dropped+len(r.events)+1)+"\n"), ev...)
	rs.order++
	r.events = append(r.events, keptEvent{data: full, order: rs.order})
	r.bytes += len(full)
	rs.bytes += len(full)
	if rs.streams[r.id] != r { // no longer kept
		r.dropLocked(len(r.events))
	}
	for r.bytes > keptStreamBytes {
		r.dropLocked(1)
	}
	for rs.bytes > keptBytes {
		oldest := rs.oldestLocked()
		if oldest == nil {
			break
		}
		oldest.dropLocked(1)
	}
	r.changedLocked()
	return full
}

// dropLocked drops the stream's n oldest events.
func (r *resumable) dropLocked(n int) {
	for _, e := range r.events[:n] {
		r.bytes -= len(e.data)
		r.rs.bytes -= len(e.data)
	}
	clear(r.events[:n])
	r.events = r.events[n:]
	r.dropped += n
}

func (r *resumable) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *resumable) end() {
	r.rs.mu.Lock()
	defer r.rs.mu.Unlock()
	if r.ended.IsZero() {
		r.ended = time.Now()
		r.changedLocked()
	}
}

// after returns the events after seq, whether the stream ended, and a
// channel closed at the next change; gone when some of those events were
// dropped.
func (r *resumable) after(seq int) (events [][]byte, ended, gone bool, changed <-chan struct{}) {
	r.rs.mu.Lock()
	defer r.rs.mu.Unlock()
	if seq < r.dropped {
		return nil, !r.ended.IsZero(), true, r.changed
	}
	for _, e := range r.events[min(seq-r.dropped, len(r.events)):] {
		events = append(events, e.data)
	}
	return events, !r.ended.IsZero(), false, r.changed
}

// resumables keeps the resumable streams of this server.
type resumables struct {
	mu      sync.Mutex
	streams map[string]*resumable
	bytes   int    // of the events of all streams
	order   uint64 // of the last event kept
}

func newResumables() *resumables { return &resumables{streams: make(map[string]*resumable)} }

func (rs *resumables) open(principal string) *resumable {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	var oldest *resumable
	for _, r := range rs.streams {
		switch {
		case r.ended.IsZero():
		case now.Sub(r.ended) > keptFor:
			rs.forgetLocked(r)
		case oldest == nil || r.ended.Before(oldest.ended):
			oldest = r
		}
	}
	if len(rs.streams) >= keptStreams && oldest != nil {
		rs.forgetLocked(oldest)
	}
	r := &resumable{id: newID(), principal: principal, rs: rs, changed: make(chan struct{})}
	rs.streams[r.id] = r
	return r
}

// forgetLocked stops keeping a stream; a client resuming it is told its
// events are gone.
func (rs *resumables) forgetLocked(r *resumable) {
	r.dropLocked(len(r.events))
	delete(rs.streams, r.id)
	r.changedLocked()
}

// oldestLocked is the stream whose first event is the oldest kept.
func (rs *resumables) oldestLocked() *resumable {
	var oldest *resumable
	for _, r := range rs.streams {
		if len(r.events) > 0 && (oldest == nil || r.events[0].order < oldest.events[0].order) {
			oldest = r
		}
	}
	return oldest
}

// find parses a Last-Event-ID: ours tells whether it is of the form of
// ours, and stream is nil when that stream is no longer kept.
func (rs *resumables) find(lastEventID string) (stream *resumable, seq int, ours bool) {
	id, seqText, ok := strings.Cut(lastEventID, ".")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 || !isStreamID(id) {
		return nil, 0, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.streams[id], seq, true
}

// isStreamID reports whether id has the form of newID's: 26 characters of
// base32 (RFC 4648). mcp-go's event ids, when an event store is set, are
// decimal numbers.
func isStreamID(id string) bool {
	if len(id) != 26 {
		return false
	}
	for _, c := range id {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// resume serves a GET with the Last-Event-ID of one of our streams: the
// events after it, then those still to come, until the call's answer. ok
// is false when the id is not of ours (mcp-go's GET stream then serves
// it). When the events after it are no longer kept (expired, dropped to
// stay within the bounds, or the stream is another client's), it answers
// 410 Gone; when events are dropped before a resumed stream could send
// them, the stream ends, and the client's next resumption gets the 410.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) bool {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		return false
	}
	stream, seq, ours := s.streams.find(last)
	if !ours {
		return false
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "Streaming unsupported", http.StatusInternalServerError)
		return true
	}
	if stream == nil || stream.principal != PrincipalFrom(r.Context()) {
		streamGone(w)
		return true
	}
	events, ended, gone, changed := stream.after(seq)
	if gone {
		streamGone(w)
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "retry: %d\n\n", retryMillis)
	flusher.Flush()
	for {
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
		if events, ended, gone, changed = stream.after(seq); gone {
			return true
		}
	}
}

// streamGone answers a resumption whose events are no longer kept.
func streamGone(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("Gone: the events after this Last-Event-ID are no longer kept (a call's events are kept %s after it ends, up to %d KiB a call and %d MiB in all); the call's answer cannot be resumed",
		keptFor, keptStreamBytes>>10, keptBytes>>20), http.StatusGone)
}
