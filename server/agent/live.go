package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// LiveTurn is what a running turn has produced so far, for a window that
// opens the conversation mid-turn: the stored transcript holds the user's
// message, this holds the rest until the turn is recorded.
type LiveTurn struct {
	TurnID    string
	Agent     string // slug
	StartedAt time.Time
	// Messages are the completed rounds: assistant messages (with their
	// tool calls) and the tool results.
	Messages []Message
	// Writing is the text streamed so far in the current model round.
	Writing string
	// PromptTokens and OutputTokens add up the completed rounds.
	PromptTokens, OutputTokens int
	// Chunks counts the pieces streamed in the current round: about one
	// token each, for a live count.
	Chunks int
}

// liveProgress is a running turn's LiveTurn, written by its run loop. Its
// own lock keeps a delta's cost to an append: no lock is shared between
// turns.
type liveProgress struct {
	mu      sync.Mutex
	snap    LiveTurn // Writing is kept in writing
	writing strings.Builder
	ended   bool // recorded: the stored transcript has it all
}

// begin names the turn once it has an ID.
func (p *liveProgress) begin(turnID, agent string, started time.Time) {
	p.mu.Lock()
	p.snap.TurnID, p.snap.Agent, p.snap.StartedAt = turnID, agent, started
	p.mu.Unlock()
}

// delta adds streamed text to the current round.
func (p *liveProgress) delta(text string) {
	p.mu.Lock()
	p.writing.WriteString(text)
	p.snap.Chunks++
	p.mu.Unlock()
}

// roundDone ends a model round with its reply and cost.
func (p *liveProgress) roundDone(reply Message, promptTokens, outputTokens int) {
	p.mu.Lock()
	p.snap.Messages = append(p.snap.Messages, reply)
	p.snap.PromptTokens += promptTokens
	p.snap.OutputTokens += outputTokens
	p.snap.Chunks = 0
	p.writing.Reset() // strings already handed out keep their bytes
	p.mu.Unlock()
}

// toolDone adds a tool's result.
func (p *liveProgress) toolDone(result Message) {
	p.mu.Lock()
	p.snap.Messages = append(p.snap.Messages, result)
	p.mu.Unlock()
}

// end marks the turn recorded, before its end is announced: whoever reads
// the transcript on EventTurnEnded finds no live turn beside it.
func (p *liveProgress) end() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

func (p *liveProgress) snapshot() (LiveTurn, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.snap
	s.Messages = slices.Clone(p.snap.Messages)
	s.Writing = p.writing.String()
	return s, s.TurnID != "" && !p.ended
}

// LiveTurn is a snapshot of the turn running in a conversation; false
// when none runs (not yet started, or already recorded).
func (cv *Conversations) LiveTurn(conversationID string) (LiveTurn, bool) {
	cv.turns.mu.Lock()
	lt, ok := cv.turns.live[conversationID]
	cv.turns.mu.Unlock()
	if !ok {
		return LiveTurn{}, false
	}
	return lt.progress.snapshot()
}

// Questions lists the questions a conversation's turns asked,
// in the order asked, with their answers and who gave them.
func (cv *Conversations) Questions(ctx context.Context, conversationID string) ([]Question, error) {
	c := cv.c
	return c.questions.store.Questions(ctx, conversationID)
}
