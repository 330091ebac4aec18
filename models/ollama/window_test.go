package ollama_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

// text is n bytes of prose; the estimate takes a third of a message's
// bytes on the wire, so n bytes of it are about n/3 tokens.
func text(n int) string {
	return strings.Repeat("word ", n/5+1)[:n]
}

// quiet answers every chat "ok": the echo would stream long prompts back
// a word at a time.
var quiet = ollamatest.WithReplyFunc(func(api.ChatRequest) ollamatest.Reply { return ollamatest.Reply{Content: "ok"} })

func user(s string) agent.Message { return agent.Message{Role: agent.RoleUser, Content: s} }

// bigTools are n tools whose definitions take about 1000 tokens each.
func bigTools(n int) []agent.ToolSpec {
	var tools []agent.ToolSpec
	for i := range n {
		tools = append(tools, agent.ToolSpec{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: text(2900),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path"}},"required":["path"]}`),
		})
	}
	return tools
}

func TestNumCtxSteps(t *testing.T) {
	tests := []struct {
		name     string
		fake     []ollamatest.Option
		client   []ollama.Option
		messages []agent.Message
		tools    []agent.ToolSpec
		want     int
	}{
		{name: "small prompt: smallest step", messages: []agent.Message{user("hi")}, want: 4096},
		{name: "about 3000 tokens: still 4096 with 1024 for the answer", messages: []agent.Message{user(text(9000))}, want: 4096},
		{name: "about 4000 tokens: next step", messages: []agent.Message{user(text(12000))}, want: 8192},
		{name: "about 6700 tokens: 16384", messages: []agent.Message{user(text(20000))}, want: 16384},
		{name: "tools count", messages: []agent.Message{user("hi")}, tools: bigTools(4), want: 8192},
		{name: "system prompt counts", messages: []agent.Message{{Role: agent.RoleSystem, Content: text(12000)}, user("hi")}, want: 8192},
		{name: "about 20000 tokens: default cap", messages: []agent.Message{user(text(60000))}, want: 32768},
		{name: "about 40000 tokens: raised cap", client: []ollama.Option{ollama.WithContextCap(131072)}, messages: []agent.Message{user(text(120000))}, want: 65536},
		{name: "never above the model's length", fake: []ollamatest.Option{ollamatest.WithContextLength(model, 10000)},
			messages: []agent.Message{user(text(20000))}, want: 10000},
		{name: "never above the cap", client: []ollama.Option{ollama.WithContextCap(12000)},
			messages: []agent.Message{user(text(20000))}, want: 12000},
		{name: "unknown length: the cap bounds it", fake: []ollamatest.Option{ollamatest.WithContextLength(model, 0)},
			messages: []agent.Message{user(text(60000))}, want: 32768},
		{name: "small model: its whole window", fake: []ollamatest.Option{ollamatest.WithContextLength(model, 2048)},
			messages: []agent.Message{user("hi")}, want: 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t, append(tt.fake, quiet)...)
			got, err := newModel(t, srv, tt.client...).Chat(t.Context(), agent.ChatRequest{Model: model, Messages: tt.messages, Tools: tt.tools}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Trimmed != 0 {
				t.Errorf("Trimmed = %d, want 0", got.Trimmed)
			}
			if diff := cmp.Diff([]int{tt.want}, srv.NumCtx()); diff != "" {
				t.Errorf("num_ctx (-want +got):\n%s", diff)
			}
			reqs := srv.ChatRequests()
			if tr := reqs[0].Truncate; tr == nil || *tr {
				t.Errorf("truncate = %v, want false: Ollama must fail, not cut", tr)
			}
			if len(reqs[0].Messages) != len(tt.messages) || len(reqs[0].Tools) != len(tt.tools) {
				t.Errorf("sent %d messages and %d tools, want %d and %d", len(reqs[0].Messages), len(reqs[0].Tools), len(tt.messages), len(tt.tools))
			}
		})
	}
}

// TestNumCtxStable: a conversation that grows keeps its step until it
// needs the next one, so Ollama does not reload the model on every call.
func TestNumCtxStable(t *testing.T) {
	srv := ollamatest.NewServer(t, quiet)
	m := newModel(t, srv)
	msgs := []agent.Message{{Role: agent.RoleSystem, Content: "Be brief."}}
	// Tokens of the whole prompt after each message: about 180, 390, 630,
	// 900, 2580, 2730, 4750, 8760.
	for _, n := range []int{500, 600, 700, 800, 5000, 400, 6000, 12000} {
		msgs = append(msgs, user(text(n)))
		reply, err := m.Chat(t.Context(), agent.ChatRequest{Model: model, Messages: msgs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, reply.Message)
	}
	want := []int{4096, 4096, 4096, 4096, 4096, 4096, 8192, 16384}
	if diff := cmp.Diff(want, srv.NumCtx()); diff != "" {
		t.Errorf("num_ctx per call (-want +got):\n%s", diff)
	}
	if n := len(srv.Calls()) - len(want); n != 1 {
		t.Errorf("%d /api/show requests for %d chats, want 1 (cached)", n, len(want))
	}
}

// TestTrimming: a transcript too long for the window loses its oldest
// messages, an assistant's tool calls together with their results; the
// system prompt, the tools and the latest user message always go.
func TestTrimming(t *testing.T) {
	k := 3000 // bytes: about 1000 tokens
	// conversation has a round of two tool calls, their arguments args
	// and their results result and result b.
	conversation := func(args json.RawMessage, result string) []agent.Message {
		call := agent.ToolCall{ID: "call_aaaa0001", Name: "tool_0", Arguments: args}
		call2 := agent.ToolCall{ID: "call_aaaa0002", Name: "tool_0", Arguments: json.RawMessage(`{"path":"/b"}`)}
		return []agent.Message{
			{Role: agent.RoleSystem, Content: "You are a careful assistant. " + text(600)},                                                    // 0
			{Role: agent.RoleUser, Content: "first " + text(k)},                                                                               // 1
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call, call2}},                                                             // 2
			{Role: agent.RoleTool, ToolCallID: call.ID, ToolName: "tool_0", Content: "result " + result},                                      // 3
			{Role: agent.RoleTool, ToolCallID: call2.ID, ToolName: "tool_0", Content: "result b"},                                             // 4
			{Role: agent.RoleAssistant, Content: "answer one " + text(k)},                                                                     // 5
			{Role: agent.RoleUser, Content: "second " + text(k)},                                                                              // 6
			{Role: agent.RoleAssistant, Content: "answer two " + text(k)},                                                                     // 7
			{Role: agent.RoleUser, Content: "and now?"},                                                                                       // 8
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "call_aaaa0003", Name: "tool_0", Arguments: json.RawMessage(`{}`)}}}, // 9
			{Role: agent.RoleTool, ToolCallID: "call_aaaa0003", ToolName: "tool_0", Content: "result c"},                                      // 10
		}
	}
	bigResult := conversation(json.RawMessage(`{"path":"/a"}`), text(k))
	bigCall := conversation(json.RawMessage(`{"path":"/a","text":"`+text(k)+`"}`), "a")
	firstWords := func(msgs []agent.Message) []string {
		var out []string
		for _, m := range msgs {
			w, _, _ := strings.Cut(m.Content, " ")
			out = append(out, string(m.Role)+":"+w)
		}
		return out
	}
	tests := []struct {
		name        string
		transcript  []agent.Message
		window      int // the model's context length
		tools       int // tools of about 1000 tokens each
		wantSent    []int
		wantTrimmed int
		wantCtx     int
	}{
		{
			name: "fits", transcript: bigResult, window: 131072, tools: 2,
			wantSent: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, wantCtx: 16384,
		},
		{
			// 8192 - 2048 for the answer leaves about 6140 for the prompt;
			// the tools (2000), system prompt (220) and the current round
			// (60) are kept, so about 3800 for the transcript: dropping the
			// first user message is not enough, and the tool calls go with
			// both their results.
			name: "oldest dropped, calls with their results", transcript: bigResult, window: 8192, tools: 2,
			wantSent: []int{0, 5, 6, 7, 8, 9, 10}, wantTrimmed: 4, wantCtx: 8192,
		},
		{
			name: "more tools, more dropped", transcript: bigResult, window: 8192, tools: 4,
			wantSent: []int{0, 7, 8, 9, 10}, wantTrimmed: 6, wantCtx: 8192,
		},
		{
			name: "everything but what must go", transcript: bigResult, window: 8192, tools: 5,
			wantSent: []int{0, 8, 9, 10}, wantTrimmed: 7, wantCtx: 8192,
		},
		{
			// Leaving out the first message and the long tool calls would
			// be enough, but their small results go with them.
			name: "results go with their calls", transcript: bigCall, window: 8192, tools: 2,
			wantSent: []int{0, 5, 6, 7, 8, 9, 10}, wantTrimmed: 4, wantCtx: 8192,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t, quiet, ollamatest.WithContextLength(model, tt.window))
			tools := bigTools(tt.tools)
			got, err := newModel(t, srv).Chat(t.Context(), agent.ChatRequest{Model: model, Messages: tt.transcript, Tools: tools}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Trimmed != tt.wantTrimmed {
				t.Errorf("Trimmed = %d, want %d", got.Trimmed, tt.wantTrimmed)
			}
			if diff := cmp.Diff([]int{tt.wantCtx}, srv.NumCtx()); diff != "" {
				t.Errorf("num_ctx (-want +got):\n%s", diff)
			}
			req := srv.ChatRequests()[0]
			var sent []string
			for _, m := range req.Messages {
				w, _, _ := strings.Cut(m.Content, " ")
				sent = append(sent, m.Role+":"+w)
			}
			var want []string
			all := firstWords(tt.transcript)
			for _, i := range tt.wantSent {
				want = append(want, all[i])
			}
			if diff := cmp.Diff(want, sent); diff != "" {
				t.Errorf("messages sent (-want +got):\n%s", diff)
			}
			if len(req.Tools) != tt.tools {
				t.Errorf("%d tools sent, want %d", len(req.Tools), tt.tools)
			}
			// No tool result without the call it answers.
			calls := map[string]bool{}
			for _, m := range req.Messages {
				for _, c := range m.ToolCalls {
					calls[c.ID] = true
				}
				if m.Role == "tool" && !calls[m.ToolCallID] {
					t.Errorf("tool result for %s sent without its call", m.ToolCallID)
				}
			}
		})
	}
}

func TestContextTooLong(t *testing.T) {
	tests := []struct {
		name     string
		fake     []ollamatest.Option
		client   []ollama.Option
		messages []agent.Message
		tools    int
		want     []string // in the message
		wantNot  []string
	}{
		{
			name:     "tools fill the model's window",
			fake:     []ollamatest.Option{ollamatest.WithContextLength(model, 8192)},
			messages: []agent.Message{{Role: agent.RoleSystem, Content: "Be brief."}, user("old " + text(3000)), user("hi")},
			tools:    7,
			want: []string{"the conversation is too long for model 'llama3.2:latest'", "the 7 tools' definitions", "about 7210 tokens", "8192-token context window",
				"choose a model with a larger context window", "give the agent fewer tools", "shorten the agent's prompt or the message"},
			wantNot: []string{"cap"},
		},
		{
			name:     "the cap is the limit",
			client:   []ollama.Option{ollama.WithContextCap(4096)},
			messages: []agent.Message{user(text(15000))},
			want: []string{"the system prompt and the latest message come to about 5010 tokens", "4096-token context window (Deskhand's context cap; the model can take 131072)",
				"raise the context cap in Settings", "choose a model with a larger context window", "or shorten"},
			wantNot: []string{"tools"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t, tt.fake...)
			got, err := newModel(t, srv, tt.client...).Chat(t.Context(), agent.ChatRequest{Model: model, Messages: tt.messages, Tools: bigTools(tt.tools)}, nil)
			if err == nil {
				t.Fatalf("Chat = %+v, want an error", got)
			}
			if !errors.Is(err, ollama.ErrContextTooLong) {
				t.Errorf("error %v is not ErrContextTooLong", err)
			}
			msg := modeltest.UserMessage(t, err)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q\nlacks %q", msg, w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(msg, w) {
					t.Errorf("message %q\nhas %q", msg, w)
				}
			}
			if n := len(srv.ChatRequests()); n != 0 {
				t.Errorf("the fake got %d chat requests, want none", n)
			}
		})
	}
}
