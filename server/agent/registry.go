package agent

import (
	"container/list"
	"sync"
	"time"
)

// registry holds the conversations in use, bounded by an LRU cap and an
// idle TTL. History lives in the store, so an evicted conversation is
// reloaded on its next call; the bound is on memory, not on handles.
type registry struct {
	mu    sync.Mutex
	cap   int
	ttl   time.Duration
	now   func() time.Time
	lru   *list.List // front = most recently used; values are *entry
	index map[string]*list.Element
}

type entry struct {
	conv     Conversation
	busy     bool
	lastUsed time.Time
	// history is the transcript as stored, kept so that a turn does not
	// read it back from the store; nil when not kept (never loaded, or
	// larger than maxKeptHistory).
	history []Message
}

// maxKeptHistory bounds the transcript kept in memory per conversation
// (bytes of content); a longer one is read from the store at each turn.
const maxKeptHistory = 1 << 20

// history returns the kept transcript of a conversation.
func (r *registry) history(id string) ([]Message, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.index[id]; ok {
		if h := el.Value.(*entry).history; h != nil {
			return h, true
		}
	}
	return nil, false
}

// keep records a conversation's transcript as it now stands in the store;
// nil forgets it.
func (r *registry) keep(id string, history []Message) {
	size := 0
	for _, m := range history {
		size += len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
		for _, c := range m.ToolCalls {
			size += len(c.Arguments)
		}
	}
	if size > maxKeptHistory {
		history = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.index[id]; ok {
		el.Value.(*entry).history = history
	}
}

func newRegistry(capacity int, ttl time.Duration, now func() time.Time) *registry {
	return &registry{cap: capacity, ttl: ttl, now: now, lru: list.New(), index: make(map[string]*list.Element)}
}

// acquire marks the conversation busy, loading it with load when it is not
// in memory. Ownership (owns, nil for any) is checked before busyness, so a
// stranger learns nothing from a busy conversation: it gets
// ErrUnknownConversation; the owner gets ErrConversationBusy.
func (r *registry) acquire(id string, owns func(Conversation) bool, load func() (Conversation, error)) (Conversation, error) {
	r.mu.Lock()
	r.sweepLocked()
	el, ok := r.index[id]
	r.mu.Unlock()
	if !ok {
		// Load outside the lock; a racing acquire of the same id is settled below.
		conv, err := load()
		if err != nil {
			return Conversation{}, err
		}
		r.mu.Lock()
		if el, ok = r.index[id]; !ok {
			el = r.lru.PushFront(&entry{conv: conv, lastUsed: r.now()})
			r.index[id] = el
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := el.Value.(*entry)
	if owns != nil && !owns(e.conv) {
		return Conversation{}, ErrUnknownConversation
	}
	if e.busy {
		return Conversation{}, ErrConversationBusy
	}
	e.busy = true
	e.lastUsed = r.now()
	if _, still := r.index[id]; !still { // evicted between the two locks
		el = r.lru.PushFront(e)
		r.index[id] = el
	}
	r.lru.MoveToFront(el)
	r.evictLocked()
	return e.conv, nil
}

// release ends the busy state and records the conversation's latest form.
func (r *registry) release(conv Conversation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.index[conv.ID]; ok {
		e := el.Value.(*entry)
		e.busy = false
		e.conv = conv
		e.lastUsed = r.now()
		r.lru.MoveToFront(el)
	}
	r.evictLocked()
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

func (r *registry) sweepLocked() {
	if r.ttl <= 0 {
		return
	}
	// The list is in order of last use, so the walk from the back stops at
	// the first entry used since the cutoff.
	cutoff := r.now().Add(-r.ttl)
	for el := r.lru.Back(); el != nil; {
		prev := el.Prev()
		e := el.Value.(*entry)
		if !e.lastUsed.Before(cutoff) {
			return
		}
		if !e.busy {
			r.lru.Remove(el)
			delete(r.index, e.conv.ID)
		}
		el = prev
	}
}

// evictLocked drops least-recently-used idle entries above the cap; busy
// ones are never dropped, so the cap may be exceeded while turns run.
func (r *registry) evictLocked() {
	for el := r.lru.Back(); el != nil && r.lru.Len() > r.cap; {
		prev := el.Prev()
		if e := el.Value.(*entry); !e.busy {
			r.lru.Remove(el)
			delete(r.index, e.conv.ID)
		}
		el = prev
	}
}
