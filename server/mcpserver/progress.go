package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Notify sends a notification to the client of the call in ctx: written
// at once on the call's own event stream when it has one, so none is lost
// and it comes before the answer; through mcp-go otherwise (stdio). Tools
// served beside the agents use it too.
func (s *Server) Notify(ctx context.Context, method string, params map[string]any) error {
	return mcpfill.Notify(ctx, s.mcp, method, params)
}

// CloseCallStream ends the event stream of the call in ctx now, if it can
// be resumed (a 2025-11-25 session's stream, kept within the limits on
// kept streams, where it goes on counting): the call goes on, its events
// are kept, and the client gets them, the answer included, by reconnecting
// with Last-Event-ID (SEP-1699). It reports whether it did.
func (s *Server) CloseCallStream(ctx context.Context) bool { return mcpfill.CloseCallStream(ctx) }

// Log sends a log message to the client of the call in ctx, as Notify
// does, if the client asked for messages of that level: by
// logging/setLevel on its session before 2026-07-28, in the request's
// _meta since.
func (s *Server) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	var want mcp.LoggingLevel
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		want = info.LogLevel
	} else if session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging); ok {
		want = session.GetLogLevel()
	}
	if want == "" || !level.ShouldSendTo(want) {
		return nil
	}
	params := map[string]any{"level": level, "data": data}
	if logger != "" {
		params["logger"] = logger
	}
	return s.Notify(ctx, string(mcp.MethodNotificationMessage), params)
}

// followProgress sends notifications/progress to the call in ctx as the
// turn proceeds: each model round, tool call and question, and those of
// the team members it calls. It does nothing
// when the call sent no progress token. stop ends it; the notifications
// already sent are counted, so the answer waits for them.
func (s *Server) followProgress(ctx context.Context, token mcp.ProgressToken, turnID string) (stop func()) {
	if token == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	events := s.core.Events.Subscribe(ctx, agent.EventModelCall, agent.EventToolCall, agent.EventQuestionAsked, agent.EventMemberProgress)
	var wg sync.WaitGroup
	wg.Go(func() {
		step, rounds := 0, 0
		for e := range events {
			if e.Turn != turnID {
				continue
			}
			var msg string
			switch e.Kind {
			case agent.EventModelCall:
				rounds++
				msg = fmt.Sprintf("thinking (model round %d)", rounds)
			case agent.EventToolCall:
				msg = "calling the tool " + e.Text
			case agent.EventQuestionAsked:
				msg = "waiting for an answer: " + e.Text
			case agent.EventMemberProgress: // a team member's turn, forwarded
				msg = e.Text
			default:
				continue
			}
			step++
			if err := s.Notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": token, "progress": step, "message": msg,
			}); err != nil {
				s.log.Debug("send progress", "err", err)
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}
