package desktop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// Search finds the conversations whose messages hold every word (case
// aside), the last message found first; older ones, beyond the recent
// list, are the fake's searchOnly.
func (f *fakeConversations) Search(_ context.Context, q agent.SearchQuery) ([]agent.SearchHit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	words := agent.SearchWords(strings.ToLower(q.Text))
	var hits []agent.SearchHit
	for id, msgs := range f.messages {
		for i := len(msgs) - 1; i >= 0; i-- {
			text := strings.ToLower(msgs[i].Content)
			all := true
			for _, w := range words {
				all = all && strings.Contains(text, w)
			}
			if !all {
				continue
			}
			h := agent.SearchHit{ConversationID: id, Role: msgs[i].Role, At: msgs[i].CreatedAt, Snippet: "…" + msgs[i].Content + "…"}
			for _, c := range append(f.conversations, f.searchOnly...) {
				if c.ID == id {
					h.AgentID, h.Principal, h.Title = c.AgentID, c.Principal, c.Title
				}
			}
			hits = append(hits, h)
			break
		}
	}
	return hits, nil
}

// typedSearches holds the searches the box asked for, to run as if the
// person had paused.
type typedSearches struct{ pending []func() }

func (s *typedSearches) after(_ time.Duration, f func()) { s.pending = append(s.pending, f) }

// TestSearchEveryMessage: the box finds words in any message of any
// conversation, older ones beyond the recent list included, once the
// person pauses; only the latest search is shown; a hit opens; an empty
// box lists the recent conversations again.
func TestSearchEveryMessage(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	old := time.Date(2025, 1, 5, 10, 0, 0, 0, time.UTC)
	convs.mu.Lock()
	convs.searchOnly = []agent.ConversationSummary{{Conversation: agent.Conversation{ID: "c9", AgentID: "a2", Principal: agent.LocalPrincipal, Title: "budget talk"}}}
	convs.messages["c9"] = []agent.Message{{Role: agent.RoleUser, Content: "the quarterly budget, Ada", TurnID: "t9", CreatedAt: old}}
	convs.turns["c9"] = []agent.Turn{{ID: "t9", Status: agent.TurnCompleted, StartedAt: old, EndedAt: old.Add(time.Second)}}
	convs.mu.Unlock()
	typed := &typedSearches{}
	v.found.after = typed.after
	rows := func() string {
		var out []string
		for _, c := range v.shown {
			l := v.rowLine(c)
			out = append(out, l.Title+" | "+l.Meta+" | "+l.State)
		}
		return strings.Join(out, "\n")
	}
	pause := func(i int) {
		t.Helper()
		typed.pending[i]()
		ui.settle()
	}

	test.Type(v.search, "budget")
	if len(v.shown) != 0 {
		t.Errorf("before the pause, no title matches, yet listed:\n%s", rows())
	}
	pause(len(typed.pending) - 1)
	if want := "budget talk | Scribe · this computer · …the quarterly budget, Ada… | found"; rows() != want {
		t.Errorf("after the pause, listed:\n%s\nwant:\n%s", rows(), want)
	}
	v.list.Select(0)
	ui.settle()
	if v.current != "c9" || !strings.Contains(v.text(), "the quarterly budget") {
		t.Errorf("opening the hit showed %q: %q", v.current, v.text())
	}
	if v.header.Text != "budget talk · Scribe · this computer" {
		t.Errorf("header %q", v.header.Text)
	}

	// A search overtaken by typing shows nothing of its own.
	v.search.SetText("ada")
	stale := len(typed.pending) - 1
	v.search.SetText("Hello")
	pause(len(typed.pending) - 1)
	want := "name game | assistant · this computer · …Hello Ada.… | done"
	if rows() != want {
		t.Errorf("the latest search listed:\n%s\nwant:\n%s", rows(), want)
	}
	pause(stale)
	if rows() != want {
		t.Errorf("an overtaken search changed the list:\n%s", rows())
	}

	// Title matches among the recent ones still show, beside the hits.
	v.search.SetText("notes")
	pause(len(typed.pending) - 1)
	if want := "notes | Scribe · this computer · …tidy my notes… | running"; rows() != want {
		t.Errorf("listed:\n%s\nwant:\n%s", rows(), want)
	}
	asked := len(typed.pending)
	v.search.SetText("")
	if len(typed.pending) != asked || len(v.shown) != 2 || v.shown[0].ID != "c1" || v.shown[1].ID != "c2" || rowOf(v.all, "c9") >= 0 {
		t.Errorf("an empty box lists %+v (%d searches asked), want the recent c1, c2 alone", v.shown, len(typed.pending))
	}

	// The hit stays open beyond the recent list: its header and who
	// speaks still name its agent and client when the list and its
	// transcript are read again.
	a.handle(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c9", Turn: "t9"})
	ui.settle()
	if v.current != "c9" || v.header.Text != "budget talk · Scribe · this computer" || v.speakers().Agent != "Scribe" {
		t.Errorf("%q open beyond the recent list: header %q, the agent speaking %q", v.current, v.header.Text, v.speakers().Agent)
	}
}

// TestSearchFindsOldConversationsWithTheRealCore: with the real core and
// store, a word in a conversation older than the 200 most recent is found
// and the conversation opens.
func TestSearchFindsOldConversationsWithTheRealCore(t *testing.T) {
	db := storetest.Open(t)
	core, err := agent.New(t.Context(), agent.Config{History: db, Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	ag, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "helper", Name: "Helper", Model: "m", Enabled: true, Conversations: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	for i := range conversationsShown + 5 {
		at := start.Add(time.Duration(i) * time.Second)
		text := fmt.Sprintf("ordinary question %d", i)
		if i == 0 {
			text = "where does the aardvark sleep?"
		}
		id := fmt.Sprintf("conv-%03d", i)
		conv := agent.Conversation{ID: id, AgentID: ag.ID, Principal: agent.LocalPrincipal, Title: fmt.Sprint("Talk ", i), CreatedAt: at, UpdatedAt: at}
		turn := agent.Turn{ID: "turn-" + id, ConversationID: id, AgentID: ag.ID, Principal: agent.LocalPrincipal, Status: agent.TurnRunning, StartedAt: at}
		if err := db.BeginTurn(t.Context(), agent.TurnStart{Turn: turn, NewConversation: &conv,
			User: agent.Message{Role: agent.RoleUser, Content: text, CreatedAt: at}})(); err != nil {
			t.Fatal(err)
		}
	}
	a, ui := newTestApp(t, CoreOf(core))
	a.refresh()
	ui.settle()
	v := a.conversations
	v.found.after = func(_ time.Duration, f func()) { f() }
	if len(v.all) != conversationsShown || rowOf(v.all, "conv-000") >= 0 {
		t.Fatalf("the recent list holds %d, conv-000 among them: %v", len(v.all), rowOf(v.all, "conv-000") >= 0)
	}
	test.Type(v.search, "Aardvark")
	ui.settle()
	if len(v.shown) != 1 || v.shown[0].ID != "conv-000" {
		t.Fatalf("the search listed %+v, want conv-000", v.shown)
	}
	if l := v.rowLine(v.shown[0]); l.Title != "Talk 0" || !strings.Contains(l.Meta, "[aardvark]") {
		t.Errorf("its row: %+v", l)
	}
	v.list.Select(0)
	ui.settle()
	if v.current != "conv-000" || !strings.Contains(v.text(), "You: where does the aardvark sleep?") {
		t.Errorf("opened %q: %q", v.current, v.text())
	}
}

// TestAroundMatch: a hit's excerpt shows the words found, however much
// came before them.
func TestAroundMatch(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"the [door] is blue", "the [door] is blue"},
		{"…one two three four five six the\nblue [door] opens…", "… six the blue [door] opens…"},
		{"no match marked here", "no match marked here"},
		{"a b c [d] e", "a b c [d] e"},
	} {
		if got := aroundMatch(tc.in); got != tc.want {
			t.Errorf("aroundMatch(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSearchSaysHowManyFound: a search says how many conversations it
// shows; no search says nothing.
func TestSearchSaysHowManyFound(t *testing.T) {
	a, _, _ := conversationsFixture(t, nil)
	v := a.conversations
	if v.foundCount.Text != "" {
		t.Errorf("no search: %q", v.foundCount.Text)
	}
	v.search.SetText("notes")
	if v.foundCount.Text != "1 found" {
		t.Errorf("a search for a title: %q, want 1 found", v.foundCount.Text)
	}
	v.search.SetText("")
	if v.foundCount.Text != "" {
		t.Errorf("search cleared: %q", v.foundCount.Text)
	}
}
