package mcpserver

import (
	"context"
	"time"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// DefaultStateTTL is how long a paused turn's requestState stays valid.
const DefaultStateTTL = 600 * time.Second

// SealState returns a requestState for a tool's next input round: sealed,
// bound to the tool and the calling principal, single-use and expiring.
// The retry reaches the tool only if the state is intact (StateVerified).
func (s *Server) SealState(ctx context.Context, tool string, round int) string {
	return s.sealer.Seal(mcpfill.Claims{Turn: "tool:" + tool, Seq: round, Tool: tool, Principal: PrincipalFrom(ctx)})
}

// StateVerified reports the round of the verified requestState the call
// carries, if any. From then on the state is used: a copy is refused.
func StateVerified(ctx context.Context) (round int, ok bool) {
	c, ok := mcpfill.ClaimsFrom(ctx)
	if ok {
		mcpfill.KeepState(ctx)
	}
	return c.Seq, ok
}
