package mcpfill

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

// TestKeptStreamsWithinLimits: a stream over KeptStreamBytes drops its
// oldest events; a client over its share of bytes loses its oldest ended
// stream, or with none its oldest events; over the total bytes, the
// client holding the most loses them. Over its share of streams a client's
// oldest ended stream goes, and with none ended its new stream is not
// kept; at the total, the oldest ended stream of the client holding the
// most goes. after reports a resumption from before a dropped event as
// gone, naming the limit, never a gap.
func TestKeptStreamsWithinLimits(t *testing.T) {
	big := bytes.Repeat([]byte("x"), KeptStreamBytes/4)
	ev := len("id: ") + 26 + len(".1\n") + len(big) // a kept event, its sequence one digit
	rs := NewResumables(KeptLimits{Streams: 6, StreamsPerClient: 3, Bytes: 8 * ev, BytesPerClient: 5 * ev})
	check := func() {
		t.Helper()
		counted, total := map[string]keptShare{}, 0
		for _, r := range rs.streams {
			k := counted[r.principal]
			k.streams++
			for _, e := range r.events {
				k.bytes += len(e.data)
			}
			counted[r.principal] = k
		}
		for _, k := range counted {
			total += k.bytes
			if k.streams > 3 || k.bytes > 5*ev {
				t.Fatalf("a client keeps %d streams, %d bytes", k.streams, k.bytes)
			}
		}
		if !maps.Equal(counted, rs.by) || total != rs.bytes {
			t.Fatalf("counted %v (%d bytes), held %v (%d bytes)", counted, total, rs.by, rs.bytes)
		}
		if len(rs.streams) > 6 || total > 8*ev {
			t.Fatalf("%d streams keep %d bytes", len(rs.streams), total)
		}
	}
	open := func(principal string, events int) *resumable {
		t.Helper()
		r, full := rs.open(principal)
		if r == nil {
			t.Fatalf("no stream for %s: %s", principal, full)
		}
		for range events {
			r.add(big)
			check()
		}
		return r
	}
	kept := func(r *resumable, events int) {
		t.Helper()
		if rs.streams[r.id] != r || len(r.events) != events {
			t.Errorf("stream of %s keeps %d events, want %d (kept: %v)", r.principal, len(r.events), events, rs.streams[r.id] == r)
		}
	}
	lost := func(r *resumable, seq int, limit string) {
		t.Helper()
		if _, _, gone, _ := r.after(seq); !strings.Contains(gone, limit) {
			t.Errorf("resuming %s's stream after event %d: gone %q, want %q", r.principal, seq, gone, limit)
		}
	}

	b := open("b", 2)
	b.end()

	// One stream over its bound drops its own oldest events.
	a1 := open("a", 5)
	kept(a1, 3)
	lost(a1, 1, "1 MiB of events a call")
	if events, _, gone, _ := a1.after(2); gone != "" || len(events) != 3 || !bytes.HasPrefix(events[0], []byte("id: "+a1.eventID(3)+"\n")) {
		t.Errorf("resuming after event 2: gone %q, %d events", gone, len(events))
	}
	a1.end()

	// a over its share of bytes: its ended stream goes first, then the
	// oldest events of its open ones; b keeps its own.
	a2 := open("a", 3)
	if rs.streams[a1.id] != nil {
		t.Error("a's ended stream was kept past a's share of bytes")
	}
	a3 := open("a", 3)
	kept(a2, 2)
	kept(a3, 3)
	lost(a2, 0, "of events kept for each client")
	kept(b, 2)

	// Over the total, the client holding the most bytes (a) loses them.
	c := open("c", 2)
	kept(a2, 1)
	lost(a2, 1, "of events kept for all clients together")
	kept(b, 2)
	kept(c, 2)

	// a at its share of streams, none ended: no room for a new one.
	open("a", 0)
	if r, full := rs.open("a"); r != nil || !strings.Contains(full, "this client already has 3 call streams kept for resumption, none ended") {
		t.Errorf("a fourth stream of a's, none ended: %v %q", r, full)
	}
	// With one ended, that one goes.
	a2.end()
	open("a", 0)
	if rs.streams[a2.id] != nil {
		t.Error("a's ended stream was kept past a's share of streams")
	}
	// At the total (6), the oldest ended stream of the client holding the
	// most goes: a's, not b's.
	a3.end()
	open("d", 0)
	open("e", 0)
	if rs.streams[a3.id] != nil || rs.streams[b.id] != b {
		t.Errorf("at the total: a's ended stream kept %v, b's %v", rs.streams[a3.id] != nil, rs.streams[b.id] == b)
	}
	check()

	// A stream no longer kept wakes its resumers and keeps nothing more.
	_, _, _, changed := c.after(2)
	rs.mu.Lock()
	rs.forgetLocked(c)
	rs.mu.Unlock()
	<-changed
	c.add(big)
	if _, _, gone, _ := c.after(2); gone == "" || c.bytes != 0 {
		t.Errorf("a forgotten stream: gone %q, kept %d bytes", gone, c.bytes)
	}
	check()
}
