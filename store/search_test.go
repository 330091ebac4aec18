package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// searchConversation writes a conversation of agent a for principal
// with one completed turn: the user's message, then the produced ones,
// all at start.
func searchConversation(t testing.TB, db *store.DB, a agent.Agent, id, principal, title string, start time.Time, user string, produced ...agent.Message) {
	t.Helper()
	c := agent.Conversation{ID: id, AgentID: a.ID, Principal: principal, Title: title, CreatedAt: start, UpdatedAt: start}
	turn := agent.Turn{ID: "t-" + id, ConversationID: id, AgentID: a.ID, Principal: principal, Status: agent.TurnRunning, StartedAt: start}
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, NewConversation: &c,
		User: agent.Message{Role: agent.RoleUser, Content: user, CreatedAt: start}})(); err != nil {
		t.Fatalf("BeginTurn %s: %v", id, err)
	}
	for i := range produced {
		produced[i].CreatedAt = start
	}
	turn.Status, turn.EndedAt = agent.TurnCompleted, start
	if err := db.EndTurn(ctx, turn, produced); err != nil {
		t.Fatalf("EndTurn %s: %v", id, err)
	}
}

func said(role agent.Role, text string) agent.Message {
	return agent.Message{Role: role, Content: text}
}

func TestSearchMessages(t *testing.T) {
	db := storetest.Open(t)
	helper, writer := putAgent(t, db, "helper"), putAgent(t, db, "writer")
	searchConversation(t, db, helper, "c-milk", "client-1", "Shopping", at(1000), "What should I buy?",
		said(agent.RoleAssistant, "Buy milk and bread at the Café."))
	searchConversation(t, db, helper, "c-tool", "client-1", "Files", at(2000), "Read my notes",
		agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "read_file"}}},
		agent.Message{Role: agent.RoleTool, Content: "zucchini and milk", ToolCallID: "1", ToolName: "read_file"},
		said(agent.RoleAssistant, "Your notes are about shopping."))
	searchConversation(t, db, writer, "c-poem", agent.LocalPrincipal, "Poem", at(3000), "Write a poem about milk",
		said(agent.RoleAssistant, "Milk, white milk, in the morning light."))
	searchConversation(t, db, writer, "c-system", "client-2", "Prompted", at(4000), "hello",
		said(agent.RoleSystem, "secretword in a system prompt"))

	hit := func(conv, agentID, principal, title string, role agent.Role, ms int, snippet string) agent.SearchHit {
		return agent.SearchHit{ConversationID: conv, AgentID: agentID, Principal: principal, Title: title, Role: role, At: at(ms), Snippet: snippet}
	}
	milk := hit("c-milk", helper.ID, "client-1", "Shopping", agent.RoleAssistant, 1000, "Buy [milk] and bread at the Café.")
	poem := hit("c-poem", writer.ID, agent.LocalPrincipal, "Poem", agent.RoleAssistant, 3000, "[Milk], white [milk], in the morning light.")
	for _, tc := range []struct {
		name string
		q    agent.SearchQuery
		want []agent.SearchHit
	}{
		{"newest first, one per conversation", agent.SearchQuery{Text: "milk", Limit: 10}, []agent.SearchHit{poem, milk}},
		{"case and accents aside", agent.SearchQuery{Text: "CAFE", Limit: 10},
			[]agent.SearchHit{hit("c-milk", helper.ID, "client-1", "Shopping", agent.RoleAssistant, 1000, "Buy milk and bread at the [Café].")}},
		{"every word", agent.SearchQuery{Text: "bread milk", Limit: 10},
			[]agent.SearchHit{hit("c-milk", helper.ID, "client-1", "Shopping", agent.RoleAssistant, 1000, "Buy [milk] and [bread] at the Café.")}},
		{"the user's words", agent.SearchQuery{Text: "buy?", Limit: 10},
			[]agent.SearchHit{hit("c-milk", helper.ID, "client-1", "Shopping", agent.RoleAssistant, 1000, "[Buy] milk and bread at the Café.")}},
		{"user message", agent.SearchQuery{Text: "poem", Limit: 10},
			[]agent.SearchHit{hit("c-poem", writer.ID, agent.LocalPrincipal, "Poem", agent.RoleUser, 3000, "Write a [poem] about milk")}},
		{"not tool results", agent.SearchQuery{Text: "zucchini", Limit: 10}, nil},
		{"not system messages", agent.SearchQuery{Text: "secretword", Limit: 10}, nil},
		{"whole words", agent.SearchQuery{Text: "mil", Limit: 10}, nil},
		{"one agent", agent.SearchQuery{Text: "milk", Agent: helper.ID, Limit: 10}, []agent.SearchHit{milk}},
		{"one client", agent.SearchQuery{Text: "milk", Client: agent.LocalPrincipal, Limit: 10}, []agent.SearchHit{poem}},
		{"both filters, nothing", agent.SearchQuery{Text: "milk", Agent: helper.ID, Client: agent.LocalPrincipal, Limit: 10}, nil},
		{"limit", agent.SearchQuery{Text: "milk", Limit: 1}, []agent.SearchHit{poem}},
		{"no match", agent.SearchQuery{Text: "elephant", Limit: 10}, nil},
		{"no word", agent.SearchQuery{Text: " ?! ", Limit: 10}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.SearchMessages(ctx, tc.q)
			if err != nil {
				t.Fatalf("SearchMessages(%+v): %v", tc.q, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SearchMessages(%+v) (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

// hostileSearches are texts that are FTS query syntax, or break it.
var hostileSearches = []string{
	`"`, `""`, `milk"`, `"milk`, `mi"lk`, `*`, `milk*`, `*milk`, `-milk`, `milk -bread`, `- -`,
	`NEAR`, `milk NEAR bread`, `milk NEAR/2 bread`, `NEAR/`, `AND`, `OR`, `NOT`, `milk AND`, `OR milk`, `NOT milk`,
	`(`, `)`, `(milk`, `milk)`, `()`, `^milk`, `content:milk`, `messages_fts:milk`, `:`, `'`, `';--`, `\`, `\"`,
	"milk\x00bread", "\x00", "\xff\xfe", "\u200b", `%`, `_`, `{milk}`, `[milk]`, `milk^2`, strings.Repeat(`"a" `, 200),
	strings.Repeat("milk ", 1000),
}

func TestSearchHostileInput(t *testing.T) {
	db := storetest.Open(t)
	searchConversation(t, db, putAgent(t, db, "helper"), "c", "client-1", "Shopping", at(1000), "buy milk",
		said(agent.RoleAssistant, "Milk and bread, not NEAR the door."))
	for _, text := range hostileSearches {
		t.Run(fmt.Sprintf("%.20q", text), func(t *testing.T) {
			if _, err := db.SearchMessages(ctx, agent.SearchQuery{Text: text, Limit: 10}); err != nil {
				t.Errorf("SearchMessages(%q): %v", text, err)
			}
		})
	}
	// The operators are words like any other.
	for _, text := range []string{`near`, `"NOT" milk`, `milk -bread`, `milk*`, `(milk)`} {
		if got, err := db.SearchMessages(ctx, agent.SearchQuery{Text: text, Limit: 10}); err != nil || len(got) != 1 {
			t.Errorf("SearchMessages(%q) = %v, %v; want the conversation", text, got, err)
		}
	}
}

func FuzzSearchMessages(f *testing.F) {
	for _, s := range hostileSearches {
		f.Add(s)
	}
	db := storetest.Open(f)
	a := agent.Agent{ID: "a", Slug: "x", Backend: agent.BackendOllama, CreatedAt: at(0), UpdatedAt: at(0)}
	if err := db.PutAgent(ctx, a); err != nil {
		f.Fatal(err)
	}
	searchConversation(f, db, a, "c", "p", "t", at(1), "milk NEAR bread")
	f.Fuzz(func(t *testing.T, text string) {
		if _, err := db.SearchMessages(ctx, agent.SearchQuery{Text: text, Limit: 5}); err != nil {
			t.Errorf("SearchMessages(%q): %v", text, err)
		}
	})
}

// TestSearchForgetsDeletedConversations: deleting an agent deletes its
// conversations' messages by ON DELETE CASCADE, and the index with them,
// whether they were indexed yet or not.
func TestSearchForgetsDeletedConversations(t *testing.T) {
	db := storetest.Open(t)
	gone, kept, early := putAgent(t, db, "gone"), putAgent(t, db, "kept"), putAgent(t, db, "early")
	searchConversation(t, db, gone, "c-gone", "p", "Gone", at(1000), "ephemeral words", said(agent.RoleAssistant, "ephemeral answer"))
	searchConversation(t, db, kept, "c-kept", "p", "Kept", at(2000), "lasting words")
	store.IndexNow(t, db)
	for word, want := range map[string]int{"ephemeral": 2, "lasting": 1, "words": 2} {
		if n := store.IndexedMatches(t, db, word); n != want {
			t.Errorf("index entries for %q before the delete = %d, want %d", word, n, want)
		}
	}
	// Deleted before the index had them: nothing to take out.
	searchConversation(t, db, early, "c-early", "p", "Early", at(3000), "fleeting words")
	if err := db.DeleteAgent(ctx, early.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteAgent(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if hits, err := db.SearchMessages(ctx, agent.SearchQuery{Text: "words", Limit: 10}); err != nil || len(hits) != 1 || hits[0].ConversationID != "c-kept" {
		t.Errorf("search after the deletes = %+v, %v; want c-kept alone", hits, err)
	}
	for word, want := range map[string]int{"ephemeral": 0, "fleeting": 0, "lasting": 1, "words": 1} {
		if n := store.IndexedMatches(t, db, word); n != want {
			t.Errorf("index entries for %q after the delete = %d, want %d", word, n, want)
		}
	}
}
