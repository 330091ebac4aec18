package agent

import (
	"context"
	"sync"
)

// turns are the turns admitted and not yet ended, so that Close can refuse
// new ones and wait for the rest, and Agents.Delete can stop and wait for an
// agent's. Its lock guards the map only: nobody holds it across I/O.
type turns struct {
	mu     sync.Mutex
	closed bool                 // Close has begun: no turn is admitted
	live   map[string]*liveTurn // by conversation ID
	// running counts admitted turns; its Add happens under mu while
	// closed is false, so it never races Close's Wait.
	running sync.WaitGroup
}

// liveTurn is a turn in progress.
type liveTurn struct {
	agentID string
	cancel  context.CancelCauseFunc
	// done is closed once the turn is recorded and has let go of its
	// conversation.
	done     chan struct{}
	progress liveProgress // what it produced so far, for LiveTurn
}

// errShuttingDown refuses a call that arrives once Close has begun.
var errShuttingDown = Userf(ErrShutdown, "Deskhand is shutting down and takes no new calls; call again once it is running")

// admit counts a new turn in, unless the core is closing; the caller
// calls running.Done when the turn ends.
func (t *turns) admit() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.running.Add(1)
	return true
}

// close refuses every turn from now on.
func (t *turns) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// wait returns when every admitted turn has ended.
func (t *turns) wait() { t.running.Wait() }

// track follows the turn running in a conversation.
func (t *turns) track(conversationID string, lt *liveTurn) {
	t.mu.Lock()
	t.live[conversationID] = lt
	t.mu.Unlock()
}

// untrack forgets the turn and tells whoever waits for it that it ended.
func (t *turns) untrack(conversationID string, lt *liveTurn) {
	t.mu.Lock()
	if t.live[conversationID] == lt {
		delete(t.live, conversationID)
	}
	t.mu.Unlock()
	close(lt.done)
}

// of lists the agent's running turns.
func (t *turns) of(agentID string) []*liveTurn {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*liveTurn
	for _, lt := range t.live {
		if lt.agentID == agentID {
			out = append(out, lt)
		}
	}
	return out
}

// cancelTurn stops the turn running in a conversation, saying why.
func (c *Core) cancelTurn(conversationID string, why error) bool {
	c.conversations.turns.mu.Lock()
	lt, ok := c.conversations.turns.live[conversationID]
	c.conversations.turns.mu.Unlock()
	if ok {
		lt.cancel(why)
	}
	return ok
}
