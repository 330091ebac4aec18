package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// answerWith accepts every elicitation with text as the answer.
func answerWith(text string) elicitFn {
	return func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"answer": text}}}, nil
	}
}

// TestClientAnswersByElicitation: accept, decline and cancel on both eras
// (elicitation/create on the legacy call stream; InputRequiredResult on
// 2026-07-28).
func TestClientAnswersByElicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) { clientAnswers(t, era) })
	}
}

func clientAnswers(t *testing.T, era string) {
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
			c := connect(t, h.URL, era, h.token("c-"+tc.name),
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
			if len(h.core.Questions().Pending()) != 0 {
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
			events := h.core.Events().Subscribe(t.Context())
			go func() {
				for e := range events {
					if e.Kind == agent.EventQuestionAsked {
						if err := h.core.Questions().Answer(e.Question, map[string]any{"answer": "Grace"}, false); err != nil {
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

// writingOllama calls write_file on target with "hello", then repeats
// the tool's result.
func writingOllama(target string) ollamatest.Option {
	return ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return ollamatest.Reply{Content: "result: " + last.Content}
		}
		args, _ := json.Marshal(map[string]string{"path": target, "content": "hello"})
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_write001", "write_file", string(args))}}
	})
}

// TestWriteFileNeedsApproval: the real write_file waits for approval,
// which the calling client gives where the agent lets it; a denial leaves
// the file untouched and its comment reaches the model.
func TestWriteFileNeedsApproval(t *testing.T) {
	folder := t.TempDir()
	target := filepath.Join(folder, "notes.txt")
	h := newHarness(t, mcpserver.GuardOptions{}, writingOllama(target))
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: ollamatest.DefaultModel, Enabled: true,
		Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, Folders: []string{folder}, ClientMayApprove: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		content map[string]any
		want    string
		written bool
	}{
		{"denied", map[string]any{"approve": false, "comment": "not today"}, "result: The person denied this call; it was not run. Their comment: not today", false},
		{"approved", map[string]any{"approve": true}, "result: Created", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prompt string
			c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("w-"+tc.name),
				client.WithElicitationHandler(elicitFn(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					prompt = r.Params.Message
					if _, err := os.Stat(target); err == nil {
						t.Error("the file was written before approval")
					}
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: tc.content}}, nil
				})))
			res := call(t, c, "scribe", map[string]any{"message": "write it down"}, nil)
			if res.IsError || !strings.HasPrefix(firstText(res), tc.want) {
				t.Fatalf("got %v", texts(res))
			}
			if !strings.Contains(prompt, "write_file") || !strings.Contains(prompt, "notes.txt") {
				t.Errorf("approval prompt = %q", prompt)
			}
			data, err := os.ReadFile(target)
			if tc.written != (err == nil) || (tc.written && string(data) != "hello") {
				t.Errorf("file after %s: %q %v", tc.name, data, err)
			}
		})
	}
}

// TestClientNeverApprovesByDefault: a client that approves every
// elicitation at once (as one driven by injected text could) is never
// asked to approve write_file unless the agent says it may; the approval
// waits for the person at the desktop, on both eras.
func TestClientNeverApprovesByDefault(t *testing.T) {
	folder := t.TempDir()
	target := filepath.Join(folder, "notes.txt")
	h := newHarness(t, mcpserver.GuardOptions{}, writingOllama(target))
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: ollamatest.DefaultModel, Enabled: true,
		Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, Folders: []string{folder}}); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			var elicited atomic.Int32
			c := connect(t, h.URL, era, h.token("auto-"+era),
				client.WithElicitationHandler(elicitFn(func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					elicited.Add(1)
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}, nil
				})))
			events := h.core.Events().Subscribe(t.Context(), agent.EventQuestionAsked)
			answered := make(chan error, 1)
			go func() {
				e := <-events
				answered <- h.core.Questions().Answer(e.Question, map[string]any{"approve": false, "comment": "desktop says no"}, false)
			}()
			res := call(t, c, "scribe", map[string]any{"message": "write it down"}, nil)
			if err := <-answered; err != nil {
				t.Fatalf("desktop answer: %v", err)
			}
			if want := "result: The person denied this call; it was not run. Their comment: desktop says no"; res.IsError || firstText(res) != want {
				t.Fatalf("got %v, want %q", texts(res), want)
			}
			if n := elicited.Load(); n != 0 {
				t.Errorf("the client was asked to approve %d times", n)
			}
			if _, err := os.Stat(target); err == nil {
				t.Error("the file was written")
			}
		})
	}
}
