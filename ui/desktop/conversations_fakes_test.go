package desktop

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/deskhand/deskhand/server/agent"
)

func (f *fakeConversations) Questions(_ context.Context, id string) ([]agent.Question, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.questions[id], nil
}

func (f *fakeConversations) LiveTurn(id string) (agent.LiveTurn, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lt, ok := f.live[id]
	return lt, ok
}

// setLive sets (or, with a zero LiveTurn, ends) the turn running in a
// conversation.
func (f *fakeConversations) setLive(id string, lt agent.LiveTurn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live == nil {
		f.live = map[string]agent.LiveTurn{}
	}
	if lt.TurnID == "" {
		delete(f.live, id)
		return
	}
	f.live[id] = lt
}

// addConversation lists one more conversation, first.
func (f *fakeConversations) addConversation(c agent.ConversationSummary) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conversations = append([]agent.ConversationSummary{c}, f.conversations...)
}

// touch moves a listed conversation first, as a call to it does.
func (f *fakeConversations) touch(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.conversations, func(c agent.ConversationSummary) bool { return c.ID == id })
	c := f.conversations[i]
	f.conversations = append([]agent.ConversationSummary{c}, slices.Delete(f.conversations, i, i+1)...)
}

// countingConversations counts the list's reads and the snapshots of
// running turns taken.
type countingConversations struct {
	Conversations
	reads, snapshots atomic.Int32
}

func (c *countingConversations) LiveTurn(id string) (agent.LiveTurn, bool) {
	c.snapshots.Add(1)
	return c.Conversations.LiveTurn(id)
}

func (c *countingConversations) Recent(ctx context.Context, n int) ([]agent.ConversationSummary, error) {
	c.reads.Add(1)
	return c.Conversations.Recent(ctx, n)
}

// unreadableConversations fails to read any transcript.
type unreadableConversations struct{ Conversations }

func (unreadableConversations) Transcript(context.Context, string) ([]agent.Message, []agent.Turn, error) {
	return nil, nil, agent.Userf(nil, "the history could not be read: disk I/O error")
}
