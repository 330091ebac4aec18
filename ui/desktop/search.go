package desktop

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// The Conversations tab's search box searches every stored message (the
// person's and the agents' text), not only the recent conversations'
// titles: as the person types, once they pause for searchDelay, the core
// searches off fyne's goroutine, and the list shows the conversations
// with hits, newest first, beside the recent ones whose title or agent
// matches. Only the latest search's hits are shown.

// searchDelay is the pause in typing after which the search runs.
const searchDelay = 250 * time.Millisecond

// searchShown bounds the conversations a search lists.
const searchShown = conversationsShown

// fullTextSearch is the state of the search of every message.
type fullTextSearch struct {
	text  string                     // what was last asked for, trimmed
	asked int                        // counts the searches asked: only the latest is shown
	hits  map[string]agent.SearchHit // the latest search's, by conversation
	// older are the conversations of hits beyond the recent list, added
	// to it (all) while the search shows them, so that the header and the
	// transcript name their agent and client.
	older map[string]bool
	// after runs f once d has passed (time.AfterFunc); tests fire it.
	after func(d time.Duration, f func())
}

// searchEvery starts a search of every message for the box's text, once
// the person pauses, unless that text is the one searched already. An
// empty box (or one without a word) searches nothing.
func (v *conversationsView) searchEvery() {
	s := &v.found
	text := strings.TrimSpace(v.search.Text)
	if text == s.text {
		return
	}
	s.text, s.hits = text, nil
	s.asked++
	asked := s.asked
	if len(agent.SearchWords(text)) == 0 {
		return
	}
	after := s.after
	if after == nil {
		after = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	after(searchDelay, func() {
		v.app.onUI(func() {
			if asked != s.asked {
				return // typed on
			}
			v.app.background(func(ctx context.Context) func() {
				hits, err := v.core.Conversations.Search(ctx, agent.SearchQuery{Text: text, Limit: searchShown})
				return func() {
					if asked != s.asked {
						return
					}
					if err != nil {
						v.say(agent.UserMessage(err), true)
						return
					}
					s.hits = make(map[string]agent.SearchHit, len(hits))
					for _, h := range hits {
						s.hits[h.ConversationID] = h
					}
					v.filter()
				}
			})
		})
	})
}

// withHits keeps the search's older conversations in all while it shows
// them, and returns the conversations to list: those matched by title or
// agent among the recent ones, and those with hits, newest first.
func (v *conversationsView) withHits(matched []agent.ConversationSummary) []agent.ConversationSummary {
	s := &v.found
	if len(s.older) > 0 {
		v.all = slices.DeleteFunc(slices.Clone(v.all), func(c agent.ConversationSummary) bool { return s.older[c.ID] })
		matched = slices.DeleteFunc(slices.Clone(matched), func(c agent.ConversationSummary) bool { return s.older[c.ID] })
		s.older = nil
	}
	if len(s.hits) == 0 {
		return matched
	}
	shown := slices.Clone(matched)
	for _, c := range v.all {
		if _, hit := s.hits[c.ID]; hit && rowOf(matched, c.ID) < 0 {
			shown = append(shown, c)
		}
	}
	s.older = make(map[string]bool)
	for id, h := range s.hits {
		if rowOf(v.all, id) >= 0 {
			continue
		}
		c := agent.ConversationSummary{Conversation: agent.Conversation{ID: id, AgentID: h.AgentID, Principal: h.Principal,
			Title: h.Title, UpdatedAt: h.At}}
		s.older[id] = true
		v.all = append(v.all, c)
		shown = append(shown, c)
	}
	// Stable: ties keep the recent list's order.
	slices.SortStableFunc(shown, func(a, b agent.ConversationSummary) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return shown
}

// rowLine is a conversation's row: with a hit, where the words are.
func (v *conversationsView) rowLine(c agent.ConversationSummary) conversationLine {
	l := conversationLabel(c, v.agentNameOf(c.AgentID), clientName(c.Principal, v.clients), v.waiting[c.ID], v.now())
	if h, ok := v.found.hits[c.ID]; ok {
		l.Meta += " · " + aroundMatch(h.Snippet)
		if v.found.older[c.ID] {
			l.State = "found"
		}
	}
	return l
}

// matchLead is how many words a hit's excerpt keeps before the first
// word found: the row is cut at its end, and the words found must show.
const matchLead = 3

// aroundMatch is a hit's excerpt on one line, starting a few words
// before the first word found (marked [like this] by the store).
func aroundMatch(snippet string) string {
	words := strings.Fields(snippet)
	first := slices.IndexFunc(words, func(w string) bool { return strings.Contains(w, "[") })
	if first > matchLead {
		words = append([]string{"…"}, words[first-matchLead:]...)
	}
	return strings.Join(words, " ")
}
