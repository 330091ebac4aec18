package store_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestTeams(t *testing.T) {
	db := storetest.Open(t)
	lead, researcher, scribe, critic := putAgent(t, db, "lead"), putAgent(t, db, "researcher"), putAgent(t, db, "scribe"), putAgent(t, db, "critic")
	teams := func(step string, want map[string][]string) {
		t.Helper()
		list, err := db.Agents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, a := range list {
			if a.Team != nil {
				got[a.Slug] = a.Team
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: teams (-want +got):\n%s", step, diff)
		}
	}
	put := func(a agent.Agent, team ...string) agent.Agent {
		t.Helper()
		a.Team = team
		if err := db.PutAgent(ctx, a); err != nil {
			t.Fatalf("PutAgent(%s): %v", a.Slug, err)
		}
		return a
	}

	// Order is kept as given, not sorted by ID.
	lead = put(lead, scribe.ID, critic.ID, researcher.ID)
	researcher = put(researcher, critic.ID)
	teams("saved", map[string][]string{"lead": {scribe.ID, critic.ID, researcher.ID}, "researcher": {critic.ID}})

	lead = put(lead, researcher.ID, scribe.ID)
	teams("reordered", map[string][]string{"lead": {researcher.ID, scribe.ID}, "researcher": {critic.ID}})

	// A member that does not exist is refused, and nothing of the write stays.
	bad := lead
	bad.Name = "changed"
	bad.Team = []string{scribe.ID, "agent-nobody"}
	if err := db.PutAgent(ctx, bad); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("PutAgent with an unknown member: %v, want ErrNotFound", err)
	}
	teams("refused", map[string][]string{"lead": {researcher.ID, scribe.ID}, "researcher": {critic.ID}})
	if list, _ := db.Agents(ctx); list[1].Slug != "lead" || list[1].Name != "lead" {
		t.Errorf("the refused write changed the agent: %+v", list[1])
	}

	// Deleting a member drops it from every team; deleting the lead drops its team.
	if err := db.DeleteAgent(ctx, critic.ID); err != nil {
		t.Fatal(err)
	}
	teams("member deleted", map[string][]string{"lead": {researcher.ID, scribe.ID}})
	if err := db.DeleteAgent(ctx, lead.ID); err != nil {
		t.Fatal(err)
	}
	teams("lead deleted", map[string][]string{})

	// No team is nil, whatever was saved.
	put(scribe)
	teams("none", map[string][]string{})
}

func TestSubConversations(t *testing.T) {
	db := storetest.Open(t)
	lead, researcher := putAgent(t, db, "lead"), putAgent(t, db, "researcher")
	parent := createConversation(t, db, lead, "conv-lead")
	turn, user := runningTurn(parent, "turn-lead", at(2))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatal(err)
	}
	sub := agent.Conversation{ID: "conv-sub", AgentID: researcher.ID, Principal: parent.Principal, Title: "find",
		CreatedAt: at(3), UpdatedAt: at(3), ParentConversation: parent.ID, ParentTurn: turn.ID}
	subTurn, subUser := runningTurn(sub, "turn-sub", at(3))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: subTurn, User: subUser, NewConversation: &sub})(); err != nil {
		t.Fatal(err)
	}
	sub.UpdatedAt = at(3)

	got, err := db.Conversation(ctx, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sub, got); diff != "" {
		t.Errorf("Conversation (-want +got):\n%s", diff)
	}
	subs, err := db.SubConversations(ctx, turn.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.Conversation{sub}, subs); diff != "" {
		t.Errorf("SubConversations (-want +got):\n%s", diff)
	}
	// Lists offer the top-level conversation only.
	for name, list := range map[string]func() ([]agent.ConversationSummary, error){
		"RecentConversations": func() ([]agent.ConversationSummary, error) { return db.RecentConversations(ctx, 10) },
		"ConversationsOf": func() ([]agent.ConversationSummary, error) {
			return db.ConversationsOf(ctx, parent.Principal, agent.PageMark{}, 10)
		},
	} {
		l, err := list()
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 1 || l[0].ID != parent.ID {
			t.Errorf("%s = %+v, want only %s", name, l, parent.ID)
		}
	}
	// Deleting the parent's agent deletes the sub-conversation with it.
	if err := db.DeleteAgent(ctx, lead.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Conversation(ctx, sub.ID); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("sub-conversation after its parent went: %v, want ErrNotFound", err)
	}
}
