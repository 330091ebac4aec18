package ollama_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	ollamamodel "github.com/ollama/ollama/types/model"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

// installed are models as Ollama might list them: some call tools, one
// cannot, one only embeds, one is on an Ollama too old to say.
var installed = []ollamatest.Option{
	ollamatest.WithModels("gemma:2b", "llama3.2:latest", "nomic-embed-text:latest", "old:latest", "qwen3:8b"),
	ollamatest.WithCapabilities("gemma:2b", ollamamodel.CapabilityCompletion),
	ollamatest.WithContextLength("gemma:2b", 8192),
	ollamatest.WithCapabilities("nomic-embed-text", ollamamodel.CapabilityEmbedding),
	ollamatest.WithContextLength("nomic-embed-text", 2048),
	ollamatest.WithCapabilities("old"),
	ollamatest.WithContextLength("old", 0),
	ollamatest.WithCapabilities("qwen3:8b", ollamamodel.CapabilityCompletion, ollamamodel.CapabilityTools, ollamamodel.CapabilityThinking),
	ollamatest.WithContextLength("qwen3:8b", 40960),
}

func TestDescribeModel(t *testing.T) {
	tests := []struct {
		name    string
		want    agent.ModelInfo
		wantErr string
	}{
		{name: "llama3.2:latest", want: agent.ModelInfo{Name: "llama3.2:latest", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 131072}},
		{name: "qwen3:8b", want: agent.ModelInfo{Name: "qwen3:8b", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 40960}},
		{name: "gemma:2b", want: agent.ModelInfo{Name: "gemma:2b", Tools: agent.CapabilityNo, StructuredOutput: agent.CapabilityYes, ContextLength: 8192}},
		{name: "nomic-embed-text", want: agent.ModelInfo{Name: "nomic-embed-text", Tools: agent.CapabilityNo, StructuredOutput: agent.CapabilityNo, ContextLength: 2048}},
		{name: "old", want: agent.ModelInfo{Name: "old"}},
		{name: "llama9:70b", wantErr: "model 'llama9:70b' is not installed — pull it with 'ollama pull llama9:70b'"},
	}
	srv := ollamatest.NewServer(t, installed...)
	m := newModel(t, srv)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.DescribeModel(t.Context(), tt.name)
			if tt.wantErr != "" {
				if msg := modeltest.UserMessage(t, err); msg != tt.wantErr {
					t.Errorf("message = %q, want %q", msg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DescribeModel (-want +got):\n%s", diff)
			}
		})
	}
}

// shows counts the /api/show requests the fake received.
func shows(srv *ollamatest.Server) int {
	n := 0
	for _, c := range srv.Calls() {
		if c.Path == "/api/show" {
			n++
		}
	}
	return n
}

// TestDescribeModelCache: answers are kept a few minutes, and forgotten
// after a pull.
func TestDescribeModelCache(t *testing.T) {
	srv := ollamatest.NewServer(t)
	m := newModel(t, srv)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ollama.SetNow(m, func() time.Time { return now })
	describe := func() {
		t.Helper()
		if _, err := m.DescribeModel(t.Context(), model); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want int // /api/show requests so far
	}{
		{name: "first", do: describe, want: 1},
		{name: "again", do: describe, want: 1},
		{name: "four minutes on", do: func() { now = now.Add(4 * time.Minute); describe() }, want: 1},
		{name: "six minutes on", do: func() { now = now.Add(2 * time.Minute); describe() }, want: 2},
		{name: "the same list", do: func() {
			if _, err := m.ListModels(t.Context()); err != nil {
				t.Fatal(err)
			}
			describe()
		}, want: 2},
		{name: "after a pull", do: func() {
			if err := m.PullModel(t.Context(), model, nil); err != nil {
				t.Fatal(err)
			}
			describe()
		}, want: 3},
	}
	for _, s := range steps {
		s.do()
		if got := shows(srv); got != s.want {
			t.Errorf("%s: %d /api/show requests, want %d", s.name, got, s.want)
		}
	}
}

func TestToolsRefused(t *testing.T) {
	tools := []agent.ToolSpec{{Name: "now", Description: "Current time"}}
	tests := []struct {
		name     string
		fake     []ollamatest.Option
		model    string
		tools    []agent.ToolSpec
		wantErr  string // "": the chat is sent
		wantSent bool
	}{
		{
			name: "names the models that can", fake: installed, model: "gemma:2b", tools: tools,
			wantErr: "model 'gemma:2b' cannot call tools, and this agent has tools — switch it to a model that can (llama3.2:latest, qwen3:8b) or take its tools off",
		},
		{
			name: "none can", model: "gemma:2b", tools: tools,
			fake: []ollamatest.Option{ollamatest.WithModels("gemma:2b", "phi:latest"),
				ollamatest.WithCapabilities("gemma:2b", ollamamodel.CapabilityCompletion), ollamatest.WithCapabilities("phi", ollamamodel.CapabilityCompletion)},
			wantErr: "model 'gemma:2b' cannot call tools, and this agent has tools — and no installed model can: pull one that can (for example 'ollama pull qwen3') or take the agent's tools off",
		},
		{name: "no tools asked", fake: installed, model: "gemma:2b", wantSent: true},
		{name: "a model that can", fake: installed, model: "qwen3:8b", tools: tools, wantSent: true},
		// Ollama itself refuses then, and says so.
		{name: "an Ollama that does not say", fake: installed, model: "old", tools: tools, wantSent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t, tt.fake...)
			_, err := newModel(t, srv).Chat(t.Context(), agent.ChatRequest{
				Model: tt.model, Messages: []agent.Message{user("what time is it?")}, Tools: tt.tools,
			}, nil)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" {
				if msg := modeltest.UserMessage(t, err); msg != tt.wantErr {
					t.Errorf("message = %q\nwant      %q", msg, tt.wantErr)
				}
				if !errors.Is(err, ollama.ErrNoToolSupport) {
					t.Errorf("error %v is not ErrNoToolSupport", err)
				}
			}
			if sent := len(srv.ChatRequests()) > 0; sent != tt.wantSent {
				t.Errorf("chat sent = %v, want %v", sent, tt.wantSent)
			}
		})
	}
}

// TestToolsRefusedChecksFewModels: the models that can call tools are
// looked for among the first few installed only, and the message names a
// few of them.
func TestToolsRefusedChecksFewModels(t *testing.T) {
	names := []string{"gemma:2b"}
	for i := range 30 {
		names = append(names, "m"+strings.Repeat("x", i%3)+":"+string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	srv := ollamatest.NewServer(t, ollamatest.WithModels(names...), ollamatest.WithCapabilities("gemma:2b", ollamamodel.CapabilityCompletion))
	_, err := newModel(t, srv).Chat(t.Context(), agent.ChatRequest{
		Model: "gemma:2b", Messages: []agent.Message{user("hi")}, Tools: []agent.ToolSpec{{Name: "now"}},
	}, nil)
	msg := modeltest.UserMessage(t, err)
	if !strings.Contains(msg, " (and 9 more)") {
		t.Errorf("message = %q, want 6 models named and 9 more", msg)
	}
	if n := shows(srv); n > 17 {
		t.Errorf("%d /api/show requests, want at most 17", n)
	}
}

// TestTrimmedWhenPromptFilledWindow: a reply whose prompt filled the window shows that
// Ollama cut the prompt after all; the turn is then marked trimmed.
func TestTrimmedWhenPromptFilledWindow(t *testing.T) {
	tests := []struct {
		prompt      int // prompt_eval_count
		wantTrimmed int
	}{
		{prompt: 12},
		{prompt: 3000},
		{prompt: 3967},
		{prompt: 3968, wantTrimmed: 1},
		{prompt: 4096, wantTrimmed: 1},
	}
	for _, tt := range tests {
		srv := ollamatest.NewServer(t, ollamatest.WithReplies(ollamatest.Reply{Content: "ok", PromptTokens: tt.prompt}))
		got, err := newModel(t, srv).Chat(t.Context(), agent.ChatRequest{Model: model, Messages: []agent.Message{user("hi")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Trimmed != tt.wantTrimmed || got.PromptTokens != tt.prompt {
			t.Errorf("prompt_eval_count %d in 4096: Trimmed = %d, PromptTokens = %d; want %d", tt.prompt, got.Trimmed, got.PromptTokens, tt.wantTrimmed)
		}
		if diff := cmp.Diff([]int{4096}, srv.NumCtx()); diff != "" {
			t.Errorf("num_ctx (-want +got):\n%s", diff)
		}
	}
}
