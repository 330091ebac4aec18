package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// legacyAsker asks the client's user with elicitation/create on the call's
// stream (legacy era and stdio).
type legacyAsker struct {
	mcp *server.MCPServer
}

// Ask implements agent.Asker. mcp-go cannot withdraw an elicitation it has
// sent: when ctx ends (the desktop answered first) it stops waiting, and
// the client's late reply is dropped.
func (a legacyAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	res, err := a.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: elicitation(q)})
	if err != nil {
		return agent.Answer{}, fmt.Errorf("elicitation: %w", err)
	}
	return answerFrom(q, res.ElicitationResponse)
}

// answerFrom reads an elicitation response: a decline or cancel is an
// answer ("declined"); accepted content must fit the question's form.
func answerFrom(q agent.Question, r mcp.ElicitationResponse) (agent.Answer, error) {
	switch r.Action {
	case mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		return agent.Answer{Declined: true, By: agent.ByClient}, nil
	case mcp.ElicitationResponseActionAccept:
		content, ok := r.Content.(map[string]any)
		if !ok {
			return agent.Answer{}, fmt.Errorf("elicitation content is %T, not an object", r.Content)
		}
		return q.ParseAnswer(content, agent.ByClient)
	}
	return agent.Answer{}, fmt.Errorf("elicitation answered with unknown action %q", r.Action)
}

// legacyContext lets a legacy-era turn ask the calling client, and run on
// its model, as far as the client declared it can. Sampling travels only
// on the client's GET stream: without one open it is not offered, so the
// turn falls back at once instead of hanging.
func (s *Server) legacyContext(ctx context.Context) context.Context {
	caps := mcpfill.ClientCapabilities(ctx)
	if caps.Elicitation != nil {
		ctx = agent.WithAsker(ctx, legacyAsker{mcp: s.mcp})
	}
	sid := mcpfill.LegacySessionID(ctx)
	if caps.Sampling != nil && (sid == mcpfill.StdioSessionID || s.sessions.Listening(sid)) {
		ctx = agent.WithClientModel(ctx, legacySampler{mcp: s.mcp, tools: caps.Sampling.Tools != nil})
	}
	return ctx
}

// legacySampler asks the client's model with sampling/createMessage.
type legacySampler struct {
	mcp   *server.MCPServer
	tools bool
}

func (l legacySampler) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	//lint:ignore SA1019 sampling/createMessage is how a legacy-era client (before 2026-07-28) lends its model; only used when it declared sampling
	return l.mcp.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: p})
}

func (l legacySampler) SupportsTools() bool { return l.tools }
