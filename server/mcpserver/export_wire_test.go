package mcpserver

// The bounds on kept events, for tests.
const (
	KeptStreamBytes = keptStreamBytes
	KeptTotalBytes  = keptBytes
)

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
