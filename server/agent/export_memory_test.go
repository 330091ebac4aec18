package agent

// Held is what the core holds in memory for conversations: those in its
// registry, those with a transcript kept, the turns running and the
// questions open.
type Held struct {
	Conversations, Transcripts, LiveTurns, Questions int
}

// HeldNow counts what the core holds in memory for conversations.
func (c *Core) HeldNow() Held {
	var h Held
	c.convs.mu.Lock()
	h.Conversations = c.convs.lru.Len()
	for el := c.convs.lru.Front(); el != nil; el = el.Next() {
		if el.Value.(*entry).history != nil {
			h.Transcripts++
		}
	}
	c.convs.mu.Unlock()
	c.turns.mu.Lock()
	h.LiveTurns = len(c.turns.live)
	c.turns.mu.Unlock()
	c.questions.mu.Lock()
	h.Questions = len(c.questions.pending)
	c.questions.mu.Unlock()
	return h
}
