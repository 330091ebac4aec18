package desktop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

func (f *fakeConversations) Subs(_ context.Context, turnID string) ([]agent.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subs[turnID], nil
}

// TestTeamTranscriptNested: a turn whose agent called team members shows
// each member's own conversation under it, indented and told as the
// member's work for the caller, two levels down.
func TestTeamTranscriptNested(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	convs := &fakeConversations{
		conversations: []agent.ConversationSummary{
			{Conversation: agent.Conversation{ID: "c1", AgentID: "lead", Principal: agent.LocalPrincipal, Title: "plan a trip", UpdatedAt: at}, LastStatus: agent.TurnCompleted},
		},
		messages: map[string][]agent.Message{
			"c1": {{Role: agent.RoleUser, Content: "Plan a trip to Lyon.", TurnID: "t1"}, {Role: agent.RoleAssistant, Content: "Take the 9:02 train.", TurnID: "t1"}},
			"s1": {{Role: agent.RoleUser, Content: "Find trains to Lyon.", TurnID: "st1"}, {Role: agent.RoleAssistant, Content: "The 9:02 is fastest.", TurnID: "st1"}},
			"s2": {{Role: agent.RoleUser, Content: "Timetable Paris-Lyon?", TurnID: "sst1"}, {Role: agent.RoleAssistant, Content: "9:02, 10:04.", TurnID: "sst1"}},
		},
		turns: map[string][]agent.Turn{
			"c1": {{ID: "t1", Status: agent.TurnCompleted, StartedAt: at, EndedAt: at.Add(time.Second)}},
			"s1": {{ID: "st1", Status: agent.TurnCompleted, StartedAt: at, EndedAt: at.Add(time.Second)}},
			"s2": {{ID: "sst1", Status: agent.TurnCompleted, StartedAt: at, EndedAt: at.Add(time.Second)}},
		},
		subs: map[string][]agent.Conversation{
			"t1":  {{ID: "s1", AgentID: "trains", ParentConversation: "c1", ParentTurn: "t1"}},
			"st1": {{ID: "s2", AgentID: "timetables", ParentConversation: "s1", ParentTurn: "st1"}},
		},
	}
	agents := &fakeAgents{agents: []agent.Agent{{ID: "lead", Slug: "planner", Name: "Planner"}, {ID: "trains", Slug: "trains", Name: "Trains"}, {ID: "timetables", Slug: "timetables", Name: "Timetables"}}}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeAgents: agents, fakeConversations: convs}).asCore())
	a.refresh()
	ui.settle()
	a.conversations.open("c1")
	ui.settle()
	text, _ := conversationTexts(a.conversations.history)
	for _, want := range []string{
		"Take the 9:02 train.",
		"↳ Trains worked on it for Planner, in a conversation of its own:",
		"Find trains to Lyon.", "The 9:02 is fastest.",
		"↳ Timetables worked on it for Trains, in a conversation of its own:",
		"9:02, 10:04.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "Find trains") > strings.Index(text, "Timetable Paris-Lyon?") {
		t.Errorf("the member's own request comes after its member's:\n%s", text)
	}
}
