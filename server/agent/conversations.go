package agent

import (
	"context"
	"errors"
	"strings"
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
