package mcpfill

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// retryMillis is the reconnection delay a resumable stream asks for.
const retryMillis = 1000

// An ended stream is kept this long for a client to resume (it
// reconnects after retryMillis).
const keptFor = 2 * time.Minute

// KeptStreamBytes bounds the events kept of one stream; beyond it, its
// oldest go. A stream holds a call's progress notifications (a few
// hundred bytes each, the token being at most mcpfill.MaxProgressTokenBytes) and
// its answer (an agent's reply, seldom over tens of KiB): 1 MiB holds
// thousands of steps and a long answer. The streams of one client, and of
// all, are bounded too (KeptLimits).
const KeptStreamBytes = 1 << 20

// KeptLimits bounds the streams kept and the bytes of their events, in
// all and for each client.
type KeptLimits struct {
	Streams, StreamsPerClient int
	Bytes, BytesPerClient     int
}

// resumable is one call's event stream, kept for resumption.
type resumable struct {
	id, principal string
	rs            *Resumables

	// Guarded by rs.mu.
	events   []keptEvent // oldest first
	dropped  int         // events dropped to keep within the bounds: 1..dropped
	lost     string      // why the last of them was dropped
	bytes    int         // of events
	ended    time.Time
	endOrder uint64        // its place among events and ends, once ended
	changed  chan struct{} // closed at each event and at the end
}

// keptEvent is an event with its "id:" line, and its place in the order
// events were kept in, across streams.
type keptEvent struct {
	data  []byte
	order uint64
}

func (r *resumable) eventID(seq int) string { return r.id + "." + strconv.Itoa(seq) }

// add numbers and keeps an event, returning it with its id. To stay
// within the bounds it drops the stream's oldest events beyond
// KeptStreamBytes; beyond its client's share of bytes, that client's
// oldest ended stream, or with none ended its oldest events; beyond the
// total, the same of the client that holds the most bytes. Other clients'
// events stay.
func (r *resumable) add(ev []byte) []byte {
	rs := r.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	full := append([]byte("id: "+r.eventID(r.dropped+len(r.events)+1)+"\n"), ev...)
	if rs.streams[r.id] != r { // no longer kept
		r.dropped++
		r.changedLocked()
		return full
	}
	rs.order++
	r.events = append(r.events, keptEvent{data: full, order: rs.order})
	r.bytes += len(full)
	rs.countLocked(r.principal, 0, len(full))
	for r.bytes > KeptStreamBytes {
		r.dropLocked(1, droppedFor(size(KeptStreamBytes)+" of events a call"))
	}
	for rs.by[r.principal].bytes > rs.limits.BytesPerClient {
		rs.shedLocked(r.principal, droppedFor(size(rs.limits.BytesPerClient)+" of events kept for each client"))
	}
	for rs.bytes > rs.limits.Bytes {
		rs.shedLocked(rs.mostBytesLocked(), droppedFor(size(rs.limits.Bytes)+" of events kept for all clients together"))
	}
	r.changedLocked()
	return full
}

// droppedFor says that events were dropped to stay within a limit.
func droppedFor(limit string) string {
	return "they were dropped to stay within the limit of " + limit
}

// dropLocked drops the stream's n oldest events, noting why if told.
func (r *resumable) dropLocked(n int, why string) {
	for _, e := range r.events[:n] {
		r.bytes -= len(e.data)
		r.rs.countLocked(r.principal, 0, -len(e.data))
	}
	clear(r.events[:n])
	r.events = r.events[n:]
	r.dropped += n
	if n > 0 && why != "" {
		r.lost = why
	}
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
		r.rs.order++
		r.endOrder = r.rs.order
		r.changedLocked()
	}
}

// after returns the events after seq, whether the stream ended, and a
// channel closed at the next change; gone, when some of those events were
// dropped, says why.
func (r *resumable) after(seq int) (events [][]byte, ended bool, gone string, changed <-chan struct{}) {
	r.rs.mu.Lock()
	defer r.rs.mu.Unlock()
	if seq < r.dropped {
		return nil, !r.ended.IsZero(), cmp.Or(r.lost, r.rs.limits.String()), r.changed
	}
	for _, e := range r.events[min(seq-r.dropped, len(r.events)):] {
		events = append(events, e.data)
	}
	return events, !r.ended.IsZero(), "", r.changed
}

// Resumables keeps the resumable call streams of a server (SEP-1699):
// open ones, those whose response ended mid-call (CloseCallStream), and
// ended ones for keptFor, all within limits. Serve a stream with
// WithCallStream, and its resumption with Resume.
type Resumables struct {
	limits KeptLimits

	mu      sync.Mutex
	streams map[string]*resumable
	by      map[string]keptShare // principal → what its streams hold
	bytes   int                  // of the events of all streams
	order   uint64               // of the last event kept or stream ended
}

// keptShare is what one client's kept streams hold.
type keptShare struct{ streams, bytes int }

// NewResumables keeps streams within limits; a share larger than its
// total is the total.
func NewResumables(limits KeptLimits) *Resumables {
	limits.StreamsPerClient = min(limits.StreamsPerClient, limits.Streams)
	limits.BytesPerClient = min(limits.BytesPerClient, limits.Bytes)
	return &Resumables{limits: limits, streams: make(map[string]*resumable), by: make(map[string]keptShare)}
}

// countLocked adds to what the principal's streams hold, and to the total.
func (rs *Resumables) countLocked(principal string, streams, bytes int) {
	k := rs.by[principal]
	k.streams += streams
	k.bytes += bytes
	if k == (keptShare{}) {
		delete(rs.by, principal)
	} else {
		rs.by[principal] = k
	}
	rs.bytes += bytes
}

// open keeps a new stream of the principal's. To make room it forgets
// expired streams, then, when the principal has its share, its oldest
// ended stream, and at the total the oldest ended stream of the client
// that holds the most. When all the streams in the way are open (or
// detached from their response) it keeps none, and says which limit.
func (rs *Resumables) open(principal string) (*resumable, string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	for _, r := range rs.streams {
		if !r.ended.IsZero() && now.Sub(r.ended) > keptFor {
			rs.forgetLocked(r)
		}
	}
	for rs.by[principal].streams >= rs.limits.StreamsPerClient {
		old := rs.oldestEndedLocked(principal)
		if old == nil {
			return nil, fmt.Sprintf("this client already has %d call streams kept for resumption, none ended, the most one client may hold", rs.limits.StreamsPerClient)
		}
		rs.forgetLocked(old)
	}
	for len(rs.streams) >= rs.limits.Streams {
		old := rs.oldestEndedLocked("")
		if old == nil {
			return nil, fmt.Sprintf("Deskhand already keeps %d call streams for resumption, none ended, its limit for all clients together", rs.limits.Streams)
		}
		rs.forgetLocked(old)
	}
	r := &resumable{id: newID(), principal: principal, rs: rs, changed: make(chan struct{})}
	rs.streams[r.id] = r
	rs.countLocked(principal, 1, 0)
	return r, ""
}

// forgetLocked stops keeping a stream; a client resuming it is told its
// events are gone.
func (rs *Resumables) forgetLocked(r *resumable) {
	r.dropLocked(len(r.events), "")
	delete(rs.streams, r.id)
	rs.countLocked(r.principal, -1, 0)
	r.changedLocked()
}

// oldestEndedLocked is the principal's stream that ended first; for ""
// the one of the client that holds the most streams, among clients with
// an ended stream.
func (rs *Resumables) oldestEndedLocked(principal string) *resumable {
	var oldest *resumable
	for _, r := range rs.streams {
		if r.ended.IsZero() || (principal != "" && r.principal != principal) {
			continue
		}
		if oldest == nil {
			oldest = r
			continue
		}
		mine, theirs := rs.by[r.principal].streams, rs.by[oldest.principal].streams
		if mine > theirs || (mine == theirs && r.endOrder < oldest.endOrder) {
			oldest = r
		}
	}
	return oldest
}

// mostBytesLocked is the client whose streams hold the most bytes.
func (rs *Resumables) mostBytesLocked() string {
	var most string
	found := false
	for p, k := range rs.by {
		if m := rs.by[most]; !found || k.bytes > m.bytes || (k.bytes == m.bytes && p < most) {
			most, found = p, true
		}
	}
	return most
}

// shedLocked frees bytes of the principal's streams: it forgets the
// oldest ended stream that holds events or, with none, drops the oldest
// event of its open streams, noting why.
func (rs *Resumables) shedLocked(principal, why string) {
	var ended, open *resumable
	for _, r := range rs.streams {
		switch {
		case r.principal != principal || len(r.events) == 0:
		case !r.ended.IsZero():
			if ended == nil || r.endOrder < ended.endOrder {
				ended = r
			}
		case open == nil || r.events[0].order < open.events[0].order:
			open = r
		}
	}
	if ended != nil {
		rs.forgetLocked(ended)
		return
	}
	open.dropLocked(1, why)
}

// find parses a Last-Event-ID: ours tells whether it is of the form of
// ours, and stream is nil when that stream is no longer kept.
func (rs *Resumables) find(lastEventID string) (stream *resumable, seq int, ours bool) {
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

// Resume serves a GET with the Last-Event-ID of one of our streams: the
// events after it, then those still to come, until the call's answer. ok
// is false when the id is not of ours (mcp-go's GET stream then serves
// it). When the events after it are no longer kept (expired, dropped to
// stay within the bounds, or the stream is another client's), it answers
// 410 Gone; when events are dropped before a resumed stream could send
// them, the stream ends, and the client's next resumption gets the 410.
// The stream must be the requesting principal's (PrincipalFrom).
func (rs *Resumables) Resume(w http.ResponseWriter, r *http.Request) bool {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		return false
	}
	stream, seq, ours := rs.find(last)
	if !ours {
		return false
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "Streaming unsupported", http.StatusInternalServerError)
		return true
	}
	if stream == nil || stream.principal != PrincipalFrom(r.Context()) {
		streamGone(w, rs.limits.String())
		return true
	}
	events, ended, gone, changed := stream.after(seq)
	if gone != "" {
		streamGone(w, gone)
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
		if events, ended, gone, changed = stream.after(seq); gone != "" {
			return true
		}
	}
}

// streamGone answers a resumption whose events are no longer kept, saying
// why.
func streamGone(w http.ResponseWriter, why string) {
	http.Error(w, "Gone: the events after this Last-Event-ID are no longer kept ("+why+"); the call's answer cannot be resumed", http.StatusGone)
}

// String says what the limits keep, for a client whose events went.
func (l KeptLimits) String() string {
	return fmt.Sprintf("a call's events are kept %s after it ends, within %s a call; %d calls and %s for each client; %d calls and %s for all clients together, the oldest going first",
		keptFor, size(KeptStreamBytes), l.StreamsPerClient, size(l.BytesPerClient), l.Streams, size(l.Bytes))
}

// size writes a number of bytes in MiB, KiB or bytes.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kept is what kept streams hold.
type Kept struct{ Streams, Bytes int }

// Audit counts afresh what the kept streams hold, for each client, and
// the bytes of the stream that holds the most; err says where the running
// counts, which the limits are enforced by, differ from it.
func (rs *Resumables) Audit() (byClient map[string]Kept, largest int, err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	byClient = make(map[string]Kept)
	total := 0
	for _, r := range rs.streams {
		k := byClient[r.principal]
		k.Streams++
		n := 0
		for _, e := range r.events {
			n += len(e.data)
		}
		k.Bytes += n
		total += n
		largest = max(largest, n)
		byClient[r.principal] = k
	}
	var errs []error
	for p, k := range byClient {
		if held := rs.by[p]; k != (Kept{held.streams, held.bytes}) {
			errs = append(errs, fmt.Errorf("kept streams of %s: counted %+v, held %+v", p, k, held))
		}
	}
	for p, held := range rs.by {
		if _, ok := byClient[p]; !ok {
			errs = append(errs, fmt.Errorf("kept streams of %s: counted none, held %+v", p, held))
		}
	}
	if total != rs.bytes {
		errs = append(errs, fmt.Errorf("kept bytes: counted %d, held %d", total, rs.bytes))
	}
	return byClient, largest, errors.Join(errs...)
}

// newID is a random id: 26 characters of base32 (isStreamID).
func newID() string { return rand.Text() }
