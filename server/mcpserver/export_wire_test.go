package mcpserver

import "testing"

// KeptStreamBytes bounds the events kept of one stream.
const KeptStreamBytes = keptStreamBytes

// KeptBytes measures the events the resumable streams keep: the bytes of
// all, and of the stream that keeps most.
func (s *Server) KeptBytes() (total, largest int) {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	for _, r := range s.streams.streams {
		n := 0
		for _, e := range r.events {
			n += len(e.data)
		}
		total += n
		largest = max(largest, n)
	}
	return total, largest
}

// Kept is what a client's kept streams hold.
type Kept struct{ Streams, Bytes int }

// KeptOf reports what the principal's kept streams hold, counted afresh;
// t fails if that is not what the server counts.
func (s *Server) KeptOf(t testing.TB, principal string) Kept {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	var k Kept
	for _, r := range s.streams.streams {
		if r.principal == principal {
			k.Streams++
			for _, e := range r.events {
				k.Bytes += len(e.data)
			}
		}
	}
	if k != (Kept{s.streams.by[principal].streams, s.streams.by[principal].bytes}) {
		t.Errorf("kept streams of %s: counted %+v, held %+v", principal, k, s.streams.by[principal])
	}
	return k
}
