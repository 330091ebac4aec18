package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestClientAgents(t *testing.T) {
	db := storetest.Open(t)
	researcher, scribe := putAgent(t, db, "researcher"), putAgent(t, db, "scribe")
	hash := func(b byte) []byte { h := make([]byte, 32); h[0] = b; return h }
	cursor := agent.Client{ID: "c1", Name: "cursor", TokenHash: hash(1), CreatedAt: at(1),
		Agents: agent.AgentScope{Only: true, AgentIDs: []string{researcher.ID, scribe.ID}}}
	claude := agent.Client{ID: "c2", Name: "claude", TokenHash: hash(2), CreatedAt: at(2)}
	none := agent.Client{ID: "c3", Name: "none", TokenHash: hash(3), CreatedAt: at(3),
		Agents: agent.AgentScope{Only: true, AgentIDs: []string{}}}
	for _, c := range []agent.Client{cursor, claude, none} {
		if err := db.PutClient(ctx, c); err != nil {
			t.Fatalf("PutClient(%s): %v", c.Name, err)
		}
	}
	check := func(step string, want ...agent.Client) {
		t.Helper()
		got, err := db.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Clients (-want +got):\n%s", step, diff)
		}
	}
	check("saved", cursor, claude, none)

	// Deleting an agent drops it from every list; the list stays a list.
	if err := db.DeleteAgent(ctx, scribe.ID); err != nil {
		t.Fatal(err)
	}
	cursor.Agents.AgentIDs = []string{researcher.ID}
	check("agent deleted", cursor, claude, none)

	// Writing a client that still names the deleted agent leaves it out
	// rather than failing.
	stale := cursor
	stale.Agents.AgentIDs = []string{researcher.ID, scribe.ID}
	stale.LastUsedAt = at(9)
	if err := db.PutClient(ctx, stale); err != nil {
		t.Fatalf("PutClient with a deleted agent: %v", err)
	}
	cursor.LastUsedAt = at(9)
	check("stale write", cursor, claude, none)

	// Back to all agents.
	cursor.Agents = agent.AgentScope{}
	if err := db.PutClient(ctx, cursor); err != nil {
		t.Fatal(err)
	}
	check("all again", cursor, claude, none)
}
