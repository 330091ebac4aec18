package control_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestSearchThroughTheSocket(t *testing.T) {
	db := storetest.Open(t)
	core, err := agent.New(t.Context(), agent.Config{History: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	a, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	conv := agent.Conversation{ID: "c1", AgentID: a.ID, Principal: agent.LocalPrincipal, Title: "Budget", CreatedAt: now, UpdatedAt: now}
	turn := agent.Turn{ID: "t1", ConversationID: "c1", AgentID: a.ID, Principal: agent.LocalPrincipal, Status: agent.TurnRunning, StartedAt: now}
	if err := db.BeginTurn(t.Context(), agent.TurnStart{Turn: turn, NewConversation: &conv,
		User: agent.Message{Role: agent.RoleUser, Content: "the quarterly budget", CreatedAt: now}})(); err != nil {
		t.Fatal(err)
	}
	c := dialed(t, core)

	for _, tc := range []struct {
		name     string
		req      control.SearchRequest
		want     string // the conversations found, or the error's words
		notFound bool
	}{
		{"found", control.SearchRequest{Text: "Quarterly"}, "c1 helper local [quarterly]", false},
		{"by agent", control.SearchRequest{Text: "budget", Agent: "helper", Limit: 5}, "c1 helper local [budget]", false},
		{"nothing", control.SearchRequest{Text: "elephant"}, "", false},
		{"no word", control.SearchRequest{Text: `"*" -`}, "type a word to search for", false},
		{"unknown agent", control.SearchRequest{Text: "budget", Agent: "nobody"}, `there is no agent "nobody"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := c.Search(t.Context(), tc.req)
			if err != nil {
				var ue *agent.UserError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || errors.Is(err, agent.ErrNotFound) != tc.notFound {
					t.Fatalf("Search(%+v) error = %v, want a UserError saying %q (not found: %v)", tc.req, err, tc.want, tc.notFound)
				}
				return
			}
			var got []string
			for _, h := range hits {
				snippet := h.Snippet[strings.Index(h.Snippet, "[") : strings.Index(h.Snippet, "]")+1]
				got = append(got, h.ConversationID+" "+h.AgentSlug+" "+h.ClientName+" "+strings.ToLower(snippet))
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("Search(%+v) = %q, want %q", tc.req, got, tc.want)
			}
			// The same through a core in this process.
			local, err := control.CoreSearch(t.Context(), control.CoreOf(core), tc.req)
			if err != nil || len(local) != len(hits) {
				t.Errorf("CoreSearch(%+v) = %d hits, %v; want %d", tc.req, len(local), err, len(hits))
			}
		})
	}
}
