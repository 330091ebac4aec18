package modeltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// Model is an adapter under test: a model that knows its base URL.
type Model interface {
	agent.Model
	BaseURL() string
}

// Start sets up one case of an adapter's own table (S says how, in the
// adapter's terms: its fake's options, its own): it starts the provider's
// fake, or none, and returns the adapter pointed at it and what is to be
// checked once the chat is over (nil: nothing more), such as what the fake
// received or what only this provider's errors carry. err is the chat's
// error (nil for a chat that succeeded).
type Start[S any] func(t *testing.T, s S) (m Model, after func(t *testing.T, err error))

// ChatCase is a chat of an adapter's own that succeeds, for [Chats].
type ChatCase[S any] struct {
	Name   string
	Setup  S
	Req    agent.ChatRequest // Model "": the table's; no Messages: [Conversation]
	Want   agent.ChatResponse
	Deltas []agent.Delta // streamed, in order
}

// Chats runs each case: the adapter answers Req with Want, streamed as
// Deltas.
func Chats[S any](t *testing.T, model string, start Start[S], cases []ChatCase[S]) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			m, after := start(t, tc.Setup)
			got, deltas := Chat(t, m, fill(tc.Req, model, Conversation()))
			if !reflect.DeepEqual(got, tc.Want) {
				t.Errorf("reply\n got %s\nwant %s", show(got), show(tc.Want))
			}
			if !reflect.DeepEqual(deltas, tc.Deltas) {
				t.Errorf("deltas\n got %s\nwant %s", show(deltas), show(tc.Deltas))
			}
			if after != nil {
				after(t, nil)
			}
		})
	}
}

// fill fills in what req leaves out: the model, and msgs for no messages.
func fill(req agent.ChatRequest, model string, msgs []agent.Message) agent.ChatRequest {
	if req.Model == "" {
		req.Model = model
	}
	if req.Messages == nil {
		req.Messages = msgs
	}
	return req
}

// EchoCase is the chat every fake's memory echo answers: [Conversation]
// to model, answered [ConversationEchoText] a word a delta, its prompt
// counted as its 12 words; out and done are the output tokens and the done
// reason as the provider's fake reports them.
func EchoCase[S any](model string, out int, done string) ChatCase[S] {
	return ChatCase[S]{
		Name:   "memory echo",
		Deltas: ConversationEcho(),
		Want: agent.ChatResponse{
			Message:      agent.Message{Role: agent.RoleAssistant, Content: ConversationEchoText},
			Model:        model,
			PromptTokens: 12,
			OutputTokens: out,
			DoneReason:   done,
		},
	}
}

// Want is what an adapter says of a failure: a *agent.UserError, with its
// cause for the log, and no reply.
type Want struct {
	Says string // the message, exactly; "{base}" stands for the adapter's base URL
	Is   error  // when set, the error is this adapter's sentinel for it
	// Check, when set, checks what only this provider's errors carry (the
	// SDK's error type in the chain).
	Check func(t *testing.T, err error)
}

// check checks a failed chat of m against w and returns the message.
func (w Want) check(t *testing.T, m Model, res agent.ChatResponse, err error) string {
	t.Helper()
	if err == nil {
		t.Fatalf("Chat = %+v, want an error", res)
	}
	msg := UserMessage(t, err)
	if want := strings.ReplaceAll(w.Says, "{base}", m.BaseURL()); msg != want {
		t.Errorf("message %q\n     want %q", msg, want)
	}
	if w.Is != nil && !errors.Is(err, w.Is) {
		t.Errorf("errors.Is(%v, %v) = false", err, w.Is)
	}
	if w.Check != nil {
		w.Check(t, err)
	}
	if !reflect.DeepEqual(res, agent.ChatResponse{}) {
		t.Errorf("a failed Chat returned a reply: %s", show(res))
	}
	return msg
}

// ErrorCase is a way an adapter's Chat fails that only this adapter has
// (those every adapter has are [Conformance]'s), for [ChatErrors].
type ErrorCase[S any] struct {
	Name  string
	Setup S
	Req   agent.ChatRequest // Model "": the table's; no Messages: a user's "hi"
	Want
}

// ChatErrors runs each case: the adapter answers Req with the error Want
// says.
func ChatErrors[S any](t *testing.T, model string, start Start[S], cases []ErrorCase[S]) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			m, after := start(t, tc.Setup)
			res, err := m.Chat(t.Context(), fill(tc.Req, model, []agent.Message{{Role: agent.RoleUser, Content: "hi"}}), func(agent.Delta) {})
			tc.check(t, m, res, err)
			if after != nil {
				after(t, err)
			}
		})
	}
}

// RoundTrip is a tool round trip, for [ToolRoundTrip]: the model calls
// tools, is sent their results and answers.
type RoundTrip struct {
	Req         agent.ChatRequest  // the first request: model, messages, tools
	First       agent.ChatResponse // the reply that calls the tools
	FirstDeltas []agent.Delta      // streamed with it
	Results     []agent.Message    // the tools' results, sent after First's message
	Final       string             // the answer to them
	// Sent returns the bodies of the chat requests the fake received. Wire
	// is what the second one holds, each top-level field's JSON; InOrder
	// are pieces of it that stand there as written (the order of a call's
	// arguments, of a schema's properties).
	Sent    func() [][]byte
	Wire    map[string]string
	InOrder []string
}

// ToolRoundTrip runs rt against m.
func ToolRoundTrip(t *testing.T, m agent.Model, rt RoundTrip) {
	t.Helper()
	first, deltas := Chat(t, m, rt.Req)
	if !reflect.DeepEqual(first, rt.First) {
		t.Fatalf("first reply\n got %s\nwant %s", show(first), show(rt.First))
	}
	if !reflect.DeepEqual(deltas, rt.FirstDeltas) {
		t.Errorf("deltas of the first reply\n got %s\nwant %s", show(deltas), show(rt.FirstDeltas))
	}
	req := rt.Req
	req.Messages = append(append(append([]agent.Message(nil), rt.Req.Messages...), first.Message), rt.Results...)
	second, _ := Chat(t, m, req)
	if second.Message.Content != rt.Final || len(second.Message.ToolCalls) != 0 {
		t.Errorf("second reply = %s, want the final answer %q", show(second.Message), rt.Final)
	}
	bodies := rt.Sent()
	if len(bodies) != 2 {
		t.Fatalf("the fake got %d chat requests, want 2", len(bodies))
	}
	for name, want := range rt.Wire {
		JSONEqual(t, name, Field(t, bodies[1], name), want)
	}
	for _, piece := range rt.InOrder {
		if !strings.Contains(string(bodies[1]), piece) {
			t.Errorf("the body lost an order: no %s in\n%s", piece, bodies[1])
		}
	}
}

// Field returns one top-level field of a JSON object body (nil when it
// has none).
func Field(t testing.TB, body []byte, name string) json.RawMessage {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return obj[name]
}

// As is a [Want.Check]: err's chain holds an E (the type of the
// provider's SDK's errors), for which ok, when set, holds.
func As[E error](ok func(E) bool) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var e E
		if !errors.As(err, &e) {
			t.Errorf("error %v carries no %T", err, e)
		} else if ok != nil && !ok(e) {
			t.Errorf("error %v: its %T is %+v, not the one wanted", err, e, e)
		}
	}
}

// show is v as JSON, for a test's failure (its raw JSON readable).
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}
