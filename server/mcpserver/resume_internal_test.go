package mcpserver

import (
	"bytes"
	"testing"
)

// TestKeptBytesDropOldest: a stream over keptStreamBytes drops its oldest
// events; all streams over keptBytes drop the oldest events of all,
// whichever stream they are in; after reports a resumption from before a
// dropped event as gone, never a gap.
func TestKeptBytesDropOldest(t *testing.T) {
	rs := newResumables()
	big := bytes.Repeat([]byte("x"), keptStreamBytes/4)
	count := func() (total int) {
		for _, r := range rs.streams {
			for _, e := range r.events {
				total += len(e.data)
			}
		}
		if total != rs.bytes {
			t.Fatalf("counted %d bytes, kept %d", rs.bytes, total)
		}
		return total
	}

	one := rs.open("p")
	for range 5 {
		one.add(big)
	}
	if one.bytes > keptStreamBytes || one.dropped != 2 {
		t.Fatalf("one stream keeps %d bytes after dropping %d events", one.bytes, one.dropped)
	}
	if _, _, gone, _ := one.after(1); !gone {
		t.Error("resuming after event 1, event 2 being dropped, is not gone")
	}
	if events, _, gone, _ := one.after(2); gone || len(events) != 3 || !bytes.HasPrefix(events[0], []byte("id: "+one.eventID(3)+"\n")) {
		t.Errorf("resuming after event 2: gone %v, %d events", gone, len(events))
	}

	// Other streams fill the rest; the first stream's events are the
	// oldest and go first.
	var others []*resumable
	for range keptBytes/keptStreamBytes + 8 { // 24 streams of 3 events: 18 MiB
		r := rs.open("p")
		others = append(others, r)
		for range 3 {
			r.add(big)
		}
		if total := count(); total > keptBytes {
			t.Fatalf("all streams keep %d bytes", total)
		}
	}
	if len(one.events) != 0 {
		t.Errorf("the oldest stream still keeps %d events", len(one.events))
	}
	if others[len(others)-1].dropped != 0 {
		t.Error("the newest stream lost events while older ones had some")
	}

	// An event over the stream's bound is not kept; the stream says so.
	huge := rs.open("p")
	full := huge.add(bytes.Repeat([]byte("y"), keptStreamBytes+1))
	if !bytes.HasPrefix(full, []byte("id: "+huge.eventID(1)+"\n")) {
		t.Errorf("the event was not numbered: %.30q", full)
	}
	if _, _, gone, _ := huge.after(0); !gone || huge.bytes != 0 {
		t.Errorf("an event over the bound: gone %v, kept %d bytes", gone, huge.bytes)
	}

	// A stream no longer kept wakes its resumers and keeps nothing more.
	last := others[len(others)-1]
	_, _, _, changed := last.after(3)
	rs.mu.Lock()
	rs.forgetLocked(last)
	rs.mu.Unlock()
	<-changed
	last.add(big)
	if _, _, gone, _ := last.after(3); !gone || last.bytes != 0 {
		t.Errorf("a forgotten stream: gone %v, kept %d bytes", gone, last.bytes)
	}
	count()
}
