package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Script is what a provider's fake is to do, in the suite's terms; each
// adapter's Start maps it onto its own fake's options.
type Script struct {
	Replies []Reply       // one per chat request, in order
	Delay   time.Duration // between the pieces of a streamed reply
	// Key is the API key the fake demands ("": none); ClientKey is the
	// one the adapter is made with.
	Key, ClientKey string
}

// Reply is one streamed reply.
type Reply struct {
	Text      string // streamed a word or so at a time
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are the usage the fake reports (0:
	// its own count).
	InputTokens, OutputTokens int
}

// ToolCall is a tool call in a reply.
type ToolCall struct {
	ID        string // "": the fake's own
	Name      string
	Arguments string // a JSON object
}

// Fake is a provider's fake server as the suite sees it.
type Fake interface {
	// WaitAborted waits until n streamed replies were abandoned by the
	// client, or ctx ends.
	WaitAborted(ctx context.Context, n int) error
}

// Adapter is one model adapter under test.
type Adapter struct {
	Model string // a model the fake serves
	// Start starts the provider's fake, scripted, and returns the adapter
	// pointed at it (retries off), made with s.ClientKey.
	Start func(t *testing.T, s Script) (agent.Model, Fake)
}

// Conformance runs the scenarios every adapter must pass against its
// provider's fake: streaming, streamed tool calls, usage, structured
// output, cancellation and deadlines mid-stream, and a refused key that
// never comes back in the error.
func Conformance(t *testing.T, a Adapter) {
	ask := func(m agent.Model, ctx context.Context, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		return m.Chat(ctx, agent.ChatRequest{Model: a.Model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "Hello, model."}},
			Tools: []agent.ToolSpec{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}},
			onDelta)
	}

	t.Run("streams text", func(t *testing.T) {
		const text = "The quick brown fox jumps over the lazy dog."
		m, _ := a.Start(t, Script{Replies: []Reply{{Text: text}}})
		var streamed strings.Builder
		deltas := 0
		res, err := ask(m, t.Context(), func(d agent.Delta) { deltas++; streamed.WriteString(d.Content) })
		if err != nil {
			t.Fatal(err)
		}
		if res.Message.Content != text || streamed.String() != text || deltas < 2 || res.Message.Role != agent.RoleAssistant {
			t.Errorf("reply %q (%s) in %d deltas %q, want %q streamed in pieces", res.Message.Content, res.Message.Role, deltas, streamed.String(), text)
		}
	})

	t.Run("streams tool calls", func(t *testing.T) {
		calls := []ToolCall{{Name: "read_file", Arguments: `{"path":"/home/a/notes.txt"}`}, {Name: "read_file", Arguments: `{"path":"/tmp/b"}`}}
		m, _ := a.Start(t, Script{Replies: []Reply{{ToolCalls: calls}}})
		res, err := ask(m, t.Context(), func(agent.Delta) {})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Message.ToolCalls
		if len(got) != len(calls) {
			t.Fatalf("tool calls %+v, want %d", got, len(calls))
		}
		for i, c := range calls {
			var g, w any
			_ = json.Unmarshal(got[i].Arguments, &g)
			_ = json.Unmarshal([]byte(c.Arguments), &w)
			if got[i].Name != c.Name || !reflect.DeepEqual(g, w) {
				t.Errorf("tool call %d: %s %s, want %s %s", i, got[i].Name, got[i].Arguments, c.Name, c.Arguments)
			}
		}
	})

	t.Run("reports usage", func(t *testing.T) {
		m, _ := a.Start(t, Script{Replies: []Reply{{Text: "Counted.", InputTokens: 17, OutputTokens: 5}}})
		res, err := ask(m, t.Context(), func(agent.Delta) {})
		if err != nil {
			t.Fatal(err)
		}
		if res.PromptTokens != 17 || res.OutputTokens != 5 {
			t.Errorf("usage %d in, %d out; want 17 and 5", res.PromptTokens, res.OutputTokens)
		}
	})

	t.Run("structured output", func(t *testing.T) {
		const answer = `{"name":"Ada","age":36}`
		m, _ := a.Start(t, Script{Replies: []Reply{{Text: answer}}})
		res, err := m.Chat(t.Context(), agent.ChatRequest{Model: a.Model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "Who wrote the first program?"}},
			Format: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"],"additionalProperties":false}`)},
			func(agent.Delta) {})
		if err != nil {
			t.Fatal(err)
		}
		if res.Message.Content != answer {
			t.Errorf("reply %q, want the JSON %s as it came", res.Message.Content, answer)
		}
	})

	long := Reply{Text: strings.Repeat("word ", 25)}
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		cancel bool // cancel at the first delta
		want   error
	}{
		{"cancelled mid-stream", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true, context.Canceled},
		{"deadline mid-stream", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 800*time.Millisecond)
		}, false, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Pieces 100 ms apart: the reply would take over two seconds, and
			// the first words come after a few of the stream's opening events.
			m, fake := a.Start(t, Script{Replies: []Reply{long}, Delay: 100 * time.Millisecond})
			ctx, cancel := tc.ctx()
			defer cancel()
			deltas := 0
			res, err := ask(m, ctx, func(agent.Delta) {
				deltas++
				if tc.cancel {
					cancel()
				}
			})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Chat = %+v, %v; want %v", res, err, tc.want)
			}
			if deltas == 0 {
				t.Error("no delta arrived before the stream stopped")
			}
			wait, stop := context.WithTimeout(context.Background(), 5*time.Second)
			defer stop()
			if err := fake.WaitAborted(wait, 1); err != nil {
				t.Fatalf("the fake did not see its request end: %v", err)
			}
		})
	}

	t.Run("a refused key is never echoed", func(t *testing.T) {
		const right, wrong = "right-key-8e1c5a2f90", "wrong-key-3b7d04c6e1"
		m, _ := a.Start(t, Script{Replies: []Reply{{Text: "never"}}, Key: right, ClientKey: wrong})
		_, err := ask(m, t.Context(), func(agent.Delta) {})
		if err == nil {
			t.Fatal("a wrong key was accepted")
		}
		if msg := UserMessage(t, err); strings.Contains(msg, wrong) || strings.Contains(msg, right) {
			t.Errorf("the error shows a key: %q", msg)
		}
	})
}
