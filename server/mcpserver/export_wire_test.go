package mcpserver

import (
	"testing"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// KeptBytes measures the events the resumable streams keep: the bytes of
// all, and of the stream that keeps most.
func (s *Server) KeptBytes() (total, largest int) {
	byClient, largest, _ := s.streams.Audit()
	for _, k := range byClient {
		total += k.Bytes
	}
	return total, largest
}

// Kept is what a client's kept streams hold.
type Kept = mcpfill.Kept

// KeptOf reports what the principal's kept streams hold, counted afresh;
// t fails if that is not what the server counts.
func (s *Server) KeptOf(t testing.TB, principal string) Kept {
	byClient, _, err := s.streams.Audit()
	if err != nil {
		t.Error(err)
	}
	return byClient[principal]
}
