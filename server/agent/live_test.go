package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
)

// TestLiveTurnWhileRunning: a turn stopped in its second model round shows
// the first round's tool call and result, the text streamed so far and
// the cost of the rounds done; once recorded, nothing is live.
func TestLiveTurnWhileRunning(t *testing.T) {
	lookup := agenttest.Tool{Name: "lookup", Fn: func(context.Context, json.RawMessage) (string, error) { return "found it", nil }}
	f := newFixture(t, agent.Config{Tools: []agent.Tool{lookup}},
		agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true, Tools: []agent.AgentTool{{Name: "lookup"}}})
	writing, gate := make(chan struct{}), make(chan struct{})
	f.model.Reply = func(ctx context.Context, n int, _ agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			onDelta(agent.Delta{Content: "Let me look."})
			return agenttest.Calls("call-1", "lookup", map[string]string{"q": "notes"}), nil
		}
		onDelta(agent.Delta{Content: "Wri"})
		onDelta(agent.Delta{Content: "ting"})
		close(writing)
		select {
		case <-gate:
		case <-ctx.Done():
			return agent.ChatResponse{}, ctx.Err()
		}
		return agenttest.Text("Writing done."), nil
	}
	ctx := t.Context()
	turnID := "4f7c2b9e-5d1a-4c8e-9f3b-2a6d8e1c7b50"
	events := f.core.Events().Subscribe(ctx, agent.EventTurnStarted)
	type outcome struct {
		res *agent.RunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: "helper", Principal: "alice", Message: "find my notes", TurnID: turnID})
		done <- outcome{res, err}
	}()
	conv := (<-events).Conversation
	<-writing

	live, ok := f.core.Conversations().LiveTurn(conv)
	if !ok {
		t.Fatal("no live turn while the model writes")
	}
	if live.TurnID != turnID || live.Agent != "helper" || live.StartedAt.IsZero() {
		t.Errorf("live turn = %+v", live)
	}
	if len(live.Messages) != 2 || len(live.Messages[0].ToolCalls) != 1 || live.Messages[0].ToolCalls[0].Name != "lookup" ||
		live.Messages[1].Role != agent.RoleTool || live.Messages[1].Content != "found it" {
		t.Errorf("messages so far = %+v", live.Messages)
	}
	if live.Writing != "Writing" || live.Chunks != 2 {
		t.Errorf("writing %q in %d chunks, want %q in 2", live.Writing, live.Chunks, "Writing")
	}
	if live.PromptTokens != 3 || live.OutputTokens != 2 {
		t.Errorf("tokens of the rounds done = %d→%d, want 3→2", live.PromptTokens, live.OutputTokens)
	}
	// A snapshot is a copy: the turn going on does not change it.
	live.Messages[0].Content = "changed"
	if again, _ := f.core.Conversations().LiveTurn(conv); again.Messages[0].Content == "changed" {
		t.Error("a snapshot shares its messages with the running turn")
	}
	if _, ok := f.core.Conversations().LiveTurn("no-such-conversation"); ok {
		t.Error("a live turn in a conversation that has none")
	}

	close(gate)
	out := <-done
	if out.err != nil || out.res.Text != "Writing done." {
		t.Fatalf("run = %+v, %v", out.res, out.err)
	}
	if _, ok := f.core.Conversations().LiveTurn(conv); ok {
		t.Error("the turn is still live once recorded")
	}
	qs, err := f.core.Conversations().Questions(ctx, conv)
	if err != nil || len(qs) != 0 {
		t.Errorf("questions = %v, %v", qs, err)
	}
}
