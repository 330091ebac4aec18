package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// On the modern era a question cannot travel on the call: the call returns
// an InputRequiredResult and the client answers with a new call. The turn
// is not replayed: it stays parked mid-flight (mcpfill.PausedTurns), and
// the retry resumes it.

// errPauseExpired ends a turn whose client never came back.
var errPauseExpired = &agent.UserError{Msg: "nobody answered the question before the paused turn expired; the turn was stopped"}

// userError is an error whose message the core shows as it is.
func userError(msg string) error { return &agent.UserError{Msg: msg} }

// mrtrAsker asks the client's user through the parked turn.
type mrtrAsker struct{ t *mcpfill.ParkedTurn }

func (a mrtrAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	res, err := a.t.Elicit(ctx, q.ConversationID, fmt.Sprintf("q%d", q.Seq), elicitation(q))
	if err != nil {
		return agent.Answer{}, err
	}
	return answerFrom(q, res.ElicitationResponse)
}

// elicitation is the form a question is put in.
func elicitation(q agent.Question) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: q.Prompt(), RequestedSchema: q.Schema()}
}

// callModern runs a modern-era call: a new turn, or the resumption of a
// parked one named by a verified requestState.
func (s *Server) callModern(ctx context.Context, req mcp.CallToolRequest, a agent.Agent, run agent.RunRequest) (*mcp.CallToolResult, error) {
	claims, resumed := mcpfill.ClaimsFrom(ctx)
	if !resumed {
		defer s.followProgress(ctx, progressToken(req), run.TurnID)()
		caps := mcpfill.ClientCapabilities(ctx)
		return s.paused.Start(ctx, req, run.Principal, run.TurnID, func(turnCtx context.Context, t *mcpfill.ParkedTurn) *mcp.CallToolResult {
			if caps.Elicitation != nil {
				turnCtx = agent.WithAsker(turnCtx, mrtrAsker{t})
			}
			if caps.Sampling != nil {
				turnCtx = agent.WithClientModel(turnCtx, t.Sampler(caps.Sampling.Tools != nil))
			}
			res, err := s.core.Conversations.Run(turnCtx, run)
			return s.finish(a, run.Conversation, res, err)
		})
	}

	// The retry passed every check (mcp-go's of its headers, ours of its
	// arguments): its state is used now, and not before.
	mcpfill.KeepState(ctx)
	t := s.paused.Get(claims.Turn)
	if t == nil {
		return mcp.NewToolResultError("this paused turn no longer exists (Deskhand restarted, or the turn ended or expired); call again without requestState to start over"), nil
	}
	defer s.followProgress(ctx, progressToken(req), t.WorkID())()
	// When the desktop answered first, this call attaches to the turn and
	// gets what it has now.
	return s.paused.Answer(ctx, req, t, claims.Seq)
}
