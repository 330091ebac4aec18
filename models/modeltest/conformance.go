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
	// Fail is how the provider fails (Start maps [FailRateLimit],
	// [FailServer], [FailMidStream], [FailCut] and [FailDown]; the suite
	// brings about the others itself).
	Fail Failure
}

// Failure is a way a provider fails. Every adapter maps each one to a
// *agent.UserError of its own words, naming the cause for the log.
type Failure int

// The failures; an adapter declares what it says for each in
// [Adapter.Errors].
const (
	NoFailure     Failure = iota
	FailKey               // the fake refuses the adapter's key (401)
	FailModel             // the fake does not serve the model asked for (404)
	FailRateLimit         // the fake answers every chat: slow down (429)
	FailServer            // the fake fails every chat (500) before streaming
	FailMidStream         // the fake sends an error after the reply's first piece
	FailCut               // the fake cuts the connection after the reply's first piece
	FailDown              // nothing listens where the adapter is pointed
	failures              // the number of failures, and one more
)

func (f Failure) String() string {
	return [...]string{"no failure", "key refused", "unknown model", "rate limited", "server error",
		"error mid-stream", "stream cut", "server down", "?"}[min(f, failures)]
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
	// pointed at it (retries off where the adapter has the option), made
	// with s.ClientKey. With s.Fail == FailDown it starts no fake (nil)
	// and points the adapter at [ClosedAddr].
	Start func(t *testing.T, s Script) (Model, Fake)
	// Errors is what the adapter says of each [Failure]: one entry each,
	// "{base}" standing for its base URL.
	Errors map[Failure]Want
}

// Conformance runs the scenarios every adapter must pass against its
// provider's fake: streaming, streamed tool calls, usage, structured
// output, cancellation and deadlines mid-stream, and each [Failure]
// mapped to the adapter's own words, with no key in them.
func Conformance(t *testing.T, a Adapter) {
	ask := func(ctx context.Context, m Model, model string, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		return m.Chat(ctx, agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "Hello, model."}},
			Tools: []agent.ToolSpec{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}},
			onDelta)
	}

	t.Run("streams text", func(t *testing.T) {
		const text = "The quick brown fox jumps over the lazy dog."
		m, _ := a.Start(t, Script{Replies: []Reply{{Text: text}}})
		var streamed strings.Builder
		deltas := 0
		res, err := ask(t.Context(), m, a.Model, func(d agent.Delta) { deltas++; streamed.WriteString(d.Content) })
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
		res, err := ask(t.Context(), m, a.Model, func(agent.Delta) {})
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
		res, err := ask(t.Context(), m, a.Model, func(agent.Delta) {})
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
			res, err := ask(ctx, m, a.Model, func(agent.Delta) {
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

	t.Run("each error mapped", func(t *testing.T) { conformErrors(t, a, ask) })
}

// conformErrors runs each failure: the adapter answers it with no reply
// and a *agent.UserError of its own, with the cause, in the words it
// declared, different for each failure, and showing no key.
func conformErrors(t *testing.T, a Adapter, ask func(context.Context, Model, string, func(agent.Delta)) (agent.ChatResponse, error)) {
	const right, wrong = "right-key-8e1c5a2f90", "wrong-key-3b7d04c6e1"
	said := map[string]Failure{}
	for f := FailKey; f < failures; f++ {
		t.Run(f.String(), func(t *testing.T) {
			want, ok := a.Errors[f]
			if !ok {
				t.Fatalf("the adapter does not say what it makes of %q (Adapter.Errors)", f)
			}
			s := Script{Replies: []Reply{{Text: "Half an answer, then more."}}, Key: right, ClientKey: right, Fail: f}
			if f == FailKey {
				s.ClientKey = wrong
			}
			m, _ := a.Start(t, s)
			model := a.Model
			if f == FailModel {
				model = "no-such-model-7f3a"
			}
			res, err := ask(t.Context(), m, model, func(agent.Delta) {})
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the failure came back as the context's end: %v", err)
			}
			msg := want.check(t, m, res, err)
			if strings.Contains(msg, right) || strings.Contains(msg, wrong) || strings.Contains(err.Error(), right) || strings.Contains(err.Error(), wrong) {
				t.Errorf("the error shows a key: %q (%v)", msg, err)
			}
			if other, ok := said[msg]; ok {
				t.Errorf("%q and %q read alike: %q", f, other, msg)
			}
			said[msg] = f
		})
	}
}
