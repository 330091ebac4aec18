package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// AgentScope is which agents a client may see: every agent (the zero
// value, and every client made before scopes existed) or only the agents
// listed, by ID, so that renaming an agent changes nothing.
type AgentScope struct {
	Only     bool
	AgentIDs []string // sorted; with Only
}

// Visibility is which agents a principal sees, by slug, as of the agents
// and clients it was made from. Its methods allocate nothing: it is
// checked on every request.
type Visibility struct {
	// All is true when every agent is visible.
	All   bool
	slugs []string // sorted, without All
	key   string   // "" with All
}

// Sees reports whether the agent of this slug is visible.
func (v Visibility) Sees(slug string) bool {
	if v.All {
		return true
	}
	_, ok := slices.BinarySearch(v.slugs, slug)
	return ok
}

// Slugs lists the visible agents in slug order; nil with All.
func (v Visibility) Slugs() []string { return slices.Clone(v.slugs) }

// Key names the visible set: equal sets have equal keys, and All's is "".
func (v Visibility) Key() string { return v.key }

// String says what the client sees, for people: "all agents", "no
// agents", "2 agents: researcher, scribe".
func (v Visibility) String() string {
	switch {
	case v.All:
		return "all agents"
	case len(v.slugs) == 0:
		return "no agents"
	case len(v.slugs) == 1:
		return "1 agent: " + v.slugs[0]
	}
	return fmt.Sprintf("%d agents: %s", len(v.slugs), strings.Join(v.slugs, ", "))
}

// NewVisibility is the visibility of these slugs only.
func NewVisibility(slugs []string) Visibility { return newVisibility(slices.Clone(slugs)) }

func newVisibility(slugs []string) Visibility {
	slices.Sort(slugs)
	slugs = slices.Compact(slugs)
	if slugs == nil {
		slugs = []string{}
	}
	return Visibility{slugs: slugs, key: "only:" + strings.Join(slugs, "\x00")}
}

// visibilityCache keeps each client's Visibility for the request path, as
// of an agents revision and a generation of scopes. A snapshot of older
// ones is rebuilt by the next request that sees it: no request reads the
// store.
type visibilityCache struct {
	gen  atomic.Uint64 // moves with every change of a client's scope
	snap atomic.Pointer[visibilitySnapshot]
}

type visibilitySnapshot struct {
	gen, agentsRev uint64
	limited        map[string]Visibility // by client ID; absent: all
}

// VisibleTo returns which agents the principal (a client's ID, or
// LocalPrincipal) sees. It reads memory only.
func (cs *Clients) VisibleTo(principal string) Visibility {
	c := cs.c
	snap := cs.visibility.snap.Load()
	if snap == nil || snap.gen != cs.visibility.gen.Load() || snap.agentsRev != c.agents.rev.Load() {
		snap = c.rebuildVisibility()
	}
	if v, ok := snap.limited[principal]; ok {
		return v
	}
	return Visibility{All: true}
}

// rebuildVisibility makes a snapshot of every limited client's visible
// slugs. The generation and revision are read before what they describe,
// so a change made meanwhile leaves the snapshot stale, never wrong.
func (c *Core) rebuildVisibility() *visibilitySnapshot {
	snap := &visibilitySnapshot{gen: c.clients.visibility.gen.Load(), agentsRev: c.agents.rev.Load(), limited: map[string]Visibility{}}
	slugOf := map[string]string{}
	for _, a := range c.agents.List() {
		slugOf[a.ID] = a.Slug
	}
	c.clients.mu.Lock()
	for _, cl := range c.clients.list {
		if cl.Active() && cl.Agents.Only {
			snap.limited[cl.ID] = visibilityOf(cl.Agents, slugOf)
		}
	}
	c.clients.mu.Unlock()
	c.clients.visibility.snap.Store(snap)
	return snap
}

func visibilityOf(scope AgentScope, slugOf map[string]string) Visibility {
	if !scope.Only {
		return Visibility{All: true}
	}
	var slugs []string
	for _, id := range scope.AgentIDs {
		if slug, ok := slugOf[id]; ok { // a deleted agent is dropped
			slugs = append(slugs, slug)
		}
	}
	return newVisibility(slugs)
}

// Visibility returns which agents the named active client sees.
func (cs *Clients) Visibility(name string) (Visibility, error) {
	c := cs.c
	cl, ok := c.activeClient(name)
	if !ok {
		return Visibility{}, Userf(ErrNotFound, "no active client named %q", name)
	}
	return cs.VisibleTo(cl.ID), nil
}

// SetAgents sets which agents the named client sees: all of them,
// or only those of the slugs given (none: no agent at all). An unknown
// slug changes nothing and says which. The client's sessions hear
// list_changed.
func (cs *Clients) SetAgents(ctx context.Context, clientName string, all bool, slugs []string) error {
	c := cs.c
	cs.writes.Lock()
	defer cs.writes.Unlock()
	if err := c.adoptStoredClient(ctx, clientName); err != nil {
		return err
	}
	cl, ok := c.activeClient(clientName)
	if !ok {
		return Userf(ErrNotFound, "no active client named %q", clientName)
	}
	scope := AgentScope{}
	if !all {
		scope.Only = true
		scope.AgentIDs = []string{}
		var unknown []string
		for _, slug := range slugs {
			a, ok := c.agents.BySlug(slug)
			if !ok {
				unknown = append(unknown, slug)
				continue
			}
			scope.AgentIDs = append(scope.AgentIDs, a.ID)
		}
		if len(unknown) > 0 {
			return Userf(ErrNotFound, "no agent with the slug %s: 'deskhand agent list' shows them", quoteList(unknown))
		}
		slices.Sort(scope.AgentIDs)
		scope.AgentIDs = slices.Compact(scope.AgentIDs)
	}
	cl.Agents = scope
	if err := cs.store.PutClient(ctx, cl); err != nil {
		return fmt.Errorf("set the agents of client %s: %w", clientName, err)
	}
	c.updateClient(cl)
	cs.visibility.gen.Add(1)
	c.publish(Event{Kind: EventClientsChanged, Text: clientName})
	c.publish(Event{Kind: EventClientAgentsChanged, Text: cl.ID})
	return nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
