package agent

// Held is what the core holds in memory for conversations: those in its
// registry, those with a transcript kept, the turns running and the
// questions open.
type Held struct {
	Conversations, Transcripts, LiveTurns, Questions int
}

// HeldNow counts what the core holds in memory for conversations.
func (cv *Conversations) HeldNow() Held {
	c := cv.c
	var h Held
	c.conversations.held.mu.Lock()
	h.Conversations = c.conversations.held.lru.Len()
	for el := c.conversations.held.lru.Front(); el != nil; el = el.Next() {
		if el.Value.(*entry).history != nil {
			h.Transcripts++
		}
	}
	c.conversations.held.mu.Unlock()
	c.conversations.turns.mu.Lock()
	h.LiveTurns = len(c.conversations.turns.live)
	c.conversations.turns.mu.Unlock()
	c.questions.mu.Lock()
	h.Questions = len(c.questions.pending)
	c.questions.mu.Unlock()
	return h
}
