package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

func TestSearchWords(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", []string{}},
		{`  "milk" AND -bread* `, []string{"milk", "AND", "bread"}},
		{"NEAR/3 (x)", []string{"NEAR", "3", "x"}},
		{"Café, naïve résumé", []string{"Café", "naïve", "résumé"}},
		{"e\u0301t\u00e9", []string{"e\u0301t\u00e9"}}, // a combining accent stays in its word
		{"日本語 テキスト", []string{"日本語", "テキスト"}},
		{"a b c d e f g h i j k l m n o p q r", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}},
	} {
		if diff := cmp.Diff(tc.want, agent.SearchWords(tc.text)); diff != "" {
			t.Errorf("SearchWords(%q) (-want +got):\n%s", tc.text, diff)
		}
	}
}

// TestCoreSearch: the core finds every client's conversations, names
// agent and client, and resolves the filters people type (a slug, a
// client's name) or says what is wrong.
func TestCoreSearch(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	other, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "other", Model: "m", Conversations: true, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := f.core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := f.run(t, cl.ID, "", "tell me about the aardvark")
	if err != nil {
		t.Fatal(err)
	}
	local, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: other.Slug, Principal: agent.LocalPrincipal, Message: "an aardvark again"})
	if err != nil {
		t.Fatal(err)
	}

	ids := func(hits []agent.SearchHit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.ConversationID+" "+h.AgentSlug+" "+h.ClientName)
		}
		return out
	}
	both := []string{local.Conversation.ID + " other local", mine.Conversation.ID + " helper cursor"}
	for _, tc := range []struct {
		name    string
		q       agent.SearchQuery
		want    []string
		wantErr string
	}{
		{"every client's", agent.SearchQuery{Text: "aardvark"}, both, ""},
		{"by slug", agent.SearchQuery{Text: "aardvark", Agent: "helper"}, both[1:], ""},
		{"by agent ID", agent.SearchQuery{Text: "aardvark", Agent: other.ID}, both[:1], ""},
		{"by client name", agent.SearchQuery{Text: "aardvark", Client: "cursor"}, both[1:], ""},
		{"by client ID", agent.SearchQuery{Text: "aardvark", Client: cl.ID}, both[1:], ""},
		{"this computer", agent.SearchQuery{Text: "aardvark", Client: agent.LocalPrincipal}, both[:1], ""},
		{"limit", agent.SearchQuery{Text: "aardvark", Limit: 1}, both[:1], ""},
		{"no word", agent.SearchQuery{Text: `"*"`}, nil, "type a word to search for"},
		{"unknown agent", agent.SearchQuery{Text: "aardvark", Agent: "nobody"}, nil, `there is no agent "nobody"`},
		{"unknown client", agent.SearchQuery{Text: "aardvark", Client: "nobody"}, nil, `there is no client "nobody"`},
		{"negative limit", agent.SearchQuery{Text: "aardvark", Limit: -1}, nil, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := f.core.Conversations().Search(t.Context(), tc.q)
			if tc.wantErr != "" {
				var uerr *agent.UserError
				if !errors.As(err, &uerr) || agent.UserMessage(err) == "" || !strings.Contains(agent.UserMessage(err), tc.wantErr) {
					t.Fatalf("Search(%+v) error = %v, want a UserError saying %q", tc.q, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Search(%+v): %v", tc.q, err)
			}
			if diff := cmp.Diff(tc.want, ids(hits)); diff != "" {
				t.Errorf("Search(%+v) (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}
