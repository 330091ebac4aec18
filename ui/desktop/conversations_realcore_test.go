package desktop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestARunningConversationWithTheRealCore: opened mid-turn, the
// conversation shows what the turn did so far and the question waiting;
// the answer and the streamed text follow, and once the turn is recorded
// the transcript says who answered.
func TestARunningConversationWithTheRealCore(t *testing.T) {
	writing, gate := make(chan struct{}), make(chan struct{})
	model := &agenttest.Model{Reply: func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			onDelta(agent.Delta{Content: "Let me ask."})
			return agenttest.Calls("q1", "ask_user", map[string]any{"question": "Your name?"}), nil
		}
		name := req.Messages[len(req.Messages)-1].Content
		onDelta(agent.Delta{Content: "hello "})
		onDelta(agent.Delta{Content: name})
		close(writing)
		select {
		case <-gate:
		case <-ctx.Done():
			return agent.ChatResponse{}, ctx.Err()
		}
		return agenttest.Text("hello " + name), nil
	}}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Desktop: true,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "greeter", Name: "Greeter", Model: "m", Enabled: true, Conversations: true}); err != nil {
		t.Fatal(err)
	}
	a, ui := newTestApp(t, CoreOf(core))
	a.tabs.SelectIndex(tabConversations) // the list follows events while it can be seen
	a.refresh()
	ui.settle()
	v := a.conversations

	events := core.Events().Subscribe(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "greeter", Principal: agent.LocalPrincipal, Message: "hi"})
		done <- err
	}()
	// next hands the desktop events until one of the kind comes.
	next := func(kind agent.EventKind) agent.Event {
		t.Helper()
		for {
			select {
			case e := <-events:
				v.event(e) // the tab alone: a popup would keep its countdown running
				ui.settle()
				if e.Kind == kind {
					return e
				}
			case <-time.After(10 * time.Second): // a guard, not a synchronisation
				t.Fatalf("no %s event", kind)
			}
		}
	}
	asked := next(agent.EventQuestionAsked)
	v.open(asked.Conversation)
	ui.settle()
	got := v.text()
	for _, want := range []string{"You: hi", "Greeter asked: Your name?", "Running · running ask_user…"} {
		if !strings.Contains(got, want) {
			t.Errorf("opened mid-turn, the transcript lacks %q:\n%s", want, got)
		}
	}
	if labels, _ := conversationTexts(v.asking); !strings.Contains(labels, "Greeter is waiting for an answer: Your name?") {
		t.Errorf("the question waiting reads %q", labels)
	}
	if err := core.Questions().Answer(asked.Question, map[string]any{"answer": "Ada"}, false); err != nil {
		t.Fatal(err)
	}
	<-writing
	for drained := false; !drained; { // the deltas were published before writing closed
		select {
		case e := <-events:
			v.event(e)
			ui.settle()
		default:
			drained = true
		}
	}
	if v.writing.Text != "hello Ada" || len(v.asking.Objects) != 0 {
		t.Errorf("while writing: %q, %d questions shown", v.writing.Text, len(v.asking.Objects))
	}
	close(gate)
	next(agent.EventTurnEnded)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got = v.text()
	for _, want := range []string{"Greeter asked: Your name?\n  answered by you, in Deskhand: Ada", "Greeter: hello Ada", "— Done"} {
		if !strings.Contains(got, want) {
			t.Errorf("the recorded transcript lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "You: hi") != 1 || v.words.Visible() {
		t.Errorf("the live turn stayed beside the recorded one:\n%s", got)
	}
}
