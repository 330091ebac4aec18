package agent

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Search limits: how many hits a search returns when the query does not
// say, and at most.
const (
	DefaultSearchLimit = 50
	MaxSearchLimit     = 500
	// maxSearchWords bounds the words of one query: each is a term the
	// index looks up.
	maxSearchWords = 16
)

// SearchQuery is a search of every stored conversation, as a person asks
// it (Conversations.Search) and as the store runs it (Searcher.SearchMessages).
type SearchQuery struct {
	// Text holds the words to find, all of them, in any order, whole
	// words, case and accents aside. Anything but letters and digits
	// separates words: quotes, operators and the like are not syntax.
	Text string
	// Agent keeps hits in one agent's conversations: its slug or ID for
	// Conversations.Search, its ID for the store. Empty for every agent.
	Agent string
	// Client keeps hits in one client's conversations: its name or ID, or
	// LocalPrincipal, for Conversations.Search; the principal for the store. Empty
	// for every client.
	Client string
	// Limit is how many conversations at most; 0 means DefaultSearchLimit.
	Limit int
}

// SearchHit is a conversation a search found, with its newest message
// that holds the words.
type SearchHit struct {
	ConversationID string
	AgentID        string
	Principal      string
	Title          string
	// Role and At are those of the message found (user or assistant).
	Role Role
	At   time.Time
	// Snippet is a short excerpt of the message around the words, each
	// found word between [ and ], cuts marked with "…".
	Snippet string
	// AgentSlug and ClientName name the agent and client for people;
	// Conversations.Search fills them ("" when the agent or client is gone).
	AgentSlug  string
	ClientName string
}

// Searcher finds words in the stored history. History implements it.
type Searcher interface {
	// SearchMessages finds the conversations whose user or assistant
	// messages hold every word of SearchWords(q.Text), newest message
	// first, one hit per conversation (its newest message found), at most
	// q.Limit. q.Agent is an agent ID and q.Client a principal here.
	SearchMessages(ctx context.Context, q SearchQuery) ([]SearchHit, error)
}

// SearchWords splits a person's search text into the words a search looks
// for: runs of letters, digits and combining marks, at most 16 of them.
// Everything else (quotes, *, -, parentheses, operators' punctuation)
// only separates words, so no text is a syntax error to the index.
func SearchWords(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	if len(words) > maxSearchWords {
		words = words[:maxSearchWords]
	}
	return words
}

// errNoWords is the answer to a search with nothing to look for.
var errNoWords = &UserError{Msg: "type a word to search for (letters or digits)"}

// Search finds the conversations, of every client, whose messages (the
// person's and the agents' text, not tool calls) hold the words, newest
// first. It is for the person's own surfaces (the desktop, the command
// line); MCP clients have no search.
func (cv *Conversations) Search(ctx context.Context, q SearchQuery) ([]SearchHit, error) {
	c := cv.c
	if len(SearchWords(q.Text)) == 0 {
		return nil, errNoWords
	}
	switch {
	case q.Limit < 0:
		return nil, Userf(nil, "the number of results must be positive, not %d", q.Limit)
	case q.Limit == 0:
		q.Limit = DefaultSearchLimit
	case q.Limit > MaxSearchLimit:
		q.Limit = MaxSearchLimit
	}
	if q.Agent != "" {
		a, ok := c.agents.BySlug(q.Agent)
		if !ok && !c.agentExists(q.Agent) {
			return nil, Userf(ErrNotFound, "there is no agent %q", q.Agent)
		}
		if ok {
			q.Agent = a.ID
		}
	}
	clients := c.allClients()
	if q.Client != "" && q.Client != LocalPrincipal {
		id, ok := clientID(clients, q.Client)
		if !ok {
			return nil, Userf(ErrNotFound, "there is no client %q", q.Client)
		}
		q.Client = id
	}
	hits, err := cv.search.SearchMessages(ctx, q)
	if err != nil {
		return nil, err
	}
	slugs := make(map[string]string)
	for _, a := range c.agents.List() {
		slugs[a.ID] = a.Slug
	}
	for i := range hits {
		hits[i].AgentSlug = slugs[hits[i].AgentID]
		hits[i].ClientName = principalName(clients, hits[i].Principal)
	}
	return hits, nil
}

// allClients are the clients the core knows, revoked ones included.
func (c *Core) allClients() []Client {
	c.clients.mu.Lock()
	defer c.clients.mu.Unlock()
	return slices.Clone(c.clients.list)
}

// clientID finds a client by ID, else by the name of an active one.
func clientID(clients []Client, nameOrID string) (string, bool) {
	for _, cl := range clients {
		if cl.ID == nameOrID {
			return cl.ID, true
		}
	}
	for _, cl := range clients {
		if cl.Name == nameOrID && cl.Active() {
			return cl.ID, true
		}
	}
	return "", false
}

// principalName names a conversation's principal: LocalPrincipal, a
// client's name, or "" for one the core does not know.
func principalName(clients []Client, principal string) string {
	if principal == LocalPrincipal {
		return LocalPrincipal
	}
	for _, cl := range clients {
		if cl.ID == principal {
			return cl.Name
		}
	}
	return ""
}
