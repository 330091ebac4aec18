package ollama_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"

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
