package desktop

import (
	"context"
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestTeamMemberAsksInThePopup: with the real core, a lead hands work to
// its member; the member's question comes up in a popup, the answer typed
// there reaches the member, and the lead's turn completes with what the
// member made of it.
func TestTeamMemberAsksInThePopup(t *testing.T) {
	// One model for both agents: the system prompt says which speaks.
	model := &agenttest.Model{Reply: func(_ context.Context, _ int, req agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		member := slices.ContainsFunc(req.Messages, func(m agent.Message) bool { return m.Role == agent.RoleSystem && m.Content == "member" })
		switch {
		case member && last.Role == agent.RoleTool:
			return agenttest.Text("the name is " + last.Content), nil
		case member:
			return agenttest.Calls("q1", "ask_user", map[string]any{"question": "Whose trip is it?"}), nil
		case last.Role == agent.RoleTool:
			return agenttest.Text("lead: " + last.Content), nil
		}
		return agenttest.Calls("c1", "agent_member", map[string]any{"message": "find the traveller's name"}), nil
	}}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Desktop: true,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	member, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "member", Prompt: "member", Description: "Knows names.", Model: "m", Enabled: true, Conversations: true, Routing: agent.RouteDesktop})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "lead", Prompt: "lead", Model: "m", Enabled: true, Conversations: true, Team: []string{member.ID}}); err != nil {
		t.Fatal(err)
	}
	a, ui := newTestApp(t, CoreOf(core))
	a.refresh()
	ui.settle()

	events := core.Events().Subscribe(t.Context())
	done := make(chan *agent.RunResult, 1)
	go func() {
		res, err := core.Conversations().Run(context.Background(), agent.RunRequest{Agent: "lead", Principal: "p", Message: "plan my trip"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := awaitPopup(t, a, events)
	if p.q.Agent != "member" || p.q.Text != "Whose trip is it?" {
		t.Errorf("the popup asks %q for %q", p.q.Text, p.q.Agent)
	}
	test.Type(p.text, "Ada")
	test.Tap(p.send)
	select {
	case res := <-done:
		if res == nil || res.Text != "lead: the name is Ada" {
			t.Errorf("the lead's turn answered %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer did not complete the lead's turn")
	}
}
