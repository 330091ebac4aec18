package agent

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Conversations are the conversations and the turns that run in them: the
// ones held in memory, and the turns admitted and not yet ended.
type Conversations struct {
	c      *Core
	store  ConversationStore
	search Searcher
	held   *registry
	turns  turns
}

// Recent lists up to limit conversations, last active first.
func (cv *Conversations) Recent(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return cv.store.RecentConversations(ctx, limit)
}

// errCancelledHere is why a turn stopped when the person stopped it.
var errCancelledHere = &UserError{Msg: "the turn was stopped from the Deskhand desktop"}

// CancelTurn stops the turn running in a conversation; false when none runs.
func (cv *Conversations) CancelTurn(conversationID string) bool {
	c := cv.c
	return c.cancelTurn(conversationID, errCancelledHere)
}

// ListFor lists the principal's own conversations, last active
// first, from after the mark.
//
// Conversations with agents hidden from the principal's client are left
// out, as if they did not exist.
func (cv *Conversations) ListFor(ctx context.Context, principal string, after PageMark, limit int) ([]ConversationSummary, error) {
	c := cv.c
	v := c.clients.VisibleTo(principal)
	if v.All {
		return cv.store.ConversationsOf(ctx, principal, after, limit)
	}
	var out []ConversationSummary
	for len(out) < limit {
		page, err := cv.store.ConversationsOf(ctx, principal, after, limit)
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if c.sees(v, s.AgentID) {
				out = append(out, s)
			}
		}
		if len(page) < limit {
			break
		}
		last := page[len(page)-1]
		after = PageMark{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	return out[:min(len(out), limit)], nil
}

// sees reports whether an agent, by ID, is in a visible set; an agent
// since deleted is not.
func (c *Core) sees(v Visibility, agentID string) bool {
	if v.All {
		return true
	}
	c.agents.mu.Lock()
	a, ok := c.agents.byID[agentID]
	c.agents.mu.Unlock()
	return ok && v.Sees(a.Slug)
}

// Read returns the conversation and its messages when principal
// owns it and its client sees the agent; anyone else gets
// ErrUnknownConversation, as for a handle never given.
func (cv *Conversations) Read(ctx context.Context, principal, id string) (Conversation, []Message, error) {
	c := cv.c
	conv, err := cv.store.Conversation(ctx, strings.TrimSpace(id))
	if errors.Is(err, ErrNotFound) || (err == nil && (conv.Principal != principal || !c.sees(c.clients.VisibleTo(principal), conv.AgentID))) {
		return Conversation{}, nil, ErrUnknownConversation
	}
	if err != nil {
		return Conversation{}, nil, err
	}
	msgs, err := cv.store.Messages(ctx, conv.ID)
	return conv, msgs, err
}

// Get is a stored conversation, whoever's it is: for the person
// at this computer, who sees them all (the desktop names the open one's
// agent and client from it, recent or not).
func (cv *Conversations) Get(ctx context.Context, id string) (Conversation, error) {
	return cv.store.Conversation(ctx, id)
}

// Transcript is a conversation's messages and turns.
func (cv *Conversations) Transcript(ctx context.Context, conversationID string) ([]Message, []Turn, error) {
	msgs, err := cv.store.Messages(ctx, conversationID)
	if err != nil {
		return nil, nil, err
	}
	turns, err := cv.store.Turns(ctx, conversationID)
	return msgs, turns, err
}

// TurnStart is what BeginTurn records.
type TurnStart struct {
	Turn Turn
	User Message
	// NewConversation is created with the turn when the turn starts it;
	// nil when the turn continues a conversation.
	NewConversation *Conversation
}

// ConversationStore keeps conversations, their messages and turns. Its
// lists (conversations, messages, turns) see every write made before
// them, a turn's start still being written included.
type ConversationStore interface {
	Conversation(ctx context.Context, id string) (Conversation, error)
	Messages(ctx context.Context, conversationID string) ([]Message, error)
	// BeginTurn records a running turn and its user message atomically,
	// with the conversation the turn starts, if any. Nothing of the turn
	// has been acknowledged yet, so it may return before the write is
	// committed: the write goes before any later one (the turn's EndTurn
	// first), and committed waits for its commit and reports its outcome.
	BeginTurn(ctx context.Context, start TurnStart) (committed func() error)
	// EndTurn records the turn's outcome and the messages it produced atomically.
	EndTurn(ctx context.Context, t Turn, produced []Message) error
	Turns(ctx context.Context, conversationID string) ([]Turn, error)
	// RecentConversations lists conversations, last active first.
	RecentConversations(ctx context.Context, limit int) ([]ConversationSummary, error)
	// ConversationsOf lists a principal's conversations, last active
	// first, from after the mark (the zero mark: from the start).
	ConversationsOf(ctx context.Context, principal string, after PageMark, limit int) ([]ConversationSummary, error)
	// InterruptRunningTurns marks every turn still running as interrupted;
	// called once at start, after a crash.
	InterruptRunningTurns(ctx context.Context, at time.Time) (int, error)
}
