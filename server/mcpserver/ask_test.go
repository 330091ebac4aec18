package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// askingOllama calls ask_user until the question was answered, then
// repeats the answer.
func askingOllama(req api.ChatRequest) ollamatest.Reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		return ollamatest.Reply{Content: "answer was: " + last.Content}
	}
	return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_ask00001", "ask_user", `{"question":"What is your name?"}`)}}
}

type elicitFn func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFn) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

func TestLegacyClientAnswersByElicitation(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	for _, tc := range []struct {
		name   string
		action mcp.ElicitationResponseAction
		want   string
	}{
		{"accept", mcp.ElicitationResponseActionAccept, "answer was: Ada"},
		{"decline", mcp.ElicitationResponseActionDecline, "answer was: The person declined to answer."},
		{"cancel", mcp.ElicitationResponseActionCancel, "answer was: The person declined to answer."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.ollama.ChatRequests())
			var asked mcp.ElicitationRequest
			c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("c-"+tc.name),
				client.WithElicitationHandler(elicitFn(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					asked = r
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: tc.action, Content: map[string]any{"answer": "Ada"}}}, nil
				})))
			res := call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
			if res.IsError || firstText(res) != tc.want {
				t.Fatalf("got %v", texts(res))
			}
			if asked.Params.Message != "What is your name?" {
				t.Errorf("elicitation message = %q", asked.Params.Message)
			}
			if n := len(h.ollama.ChatRequests()) - before; n != 2 {
				t.Errorf("Ollama served %d chat requests, want 2: the turn was replayed", n)
			}
			if len(h.core.Pending()) != 0 {
				t.Error("question left pending")
			}
		})
	}
}

// TestDesktopAnswersWhenTheClientCannot: a client without elicitation (and,
// for now, every modern one) gets its answer from the desktop.
func TestDesktopAnswersWhenTheClientCannot(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("d-"+era))
			events := h.core.Subscribe(t.Context())
			go func() {
				for e := range events {
					if e.Kind == agent.EventQuestionAsked {
						if err := h.core.AnswerQuestion(e.Question, map[string]any{"answer": "Grace"}, false); err != nil {
							t.Error(err)
						}
						return
					}
				}
			}()
			res := call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
			if res.IsError || !strings.HasPrefix(firstText(res), "answer was: Grace") {
				t.Fatalf("got %v", texts(res))
			}
		})
	}
}
