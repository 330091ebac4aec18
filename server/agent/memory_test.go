package agent_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestMemoryDoesNotGrowWithConversations (issue 20): the core holds what
// its bounds allow, whatever the number of conversations it has seen:
// at most ConversationCap conversations with their transcripts, no turn
// or question once the turns are recorded, and a heap that stays flat
// from one thousand conversations to the next.
func TestMemoryDoesNotGrowWithConversations(t *testing.T) {
	const capacity = 64
	f := newFixture(t, agent.Config{ConversationCap: capacity,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: forgetful{}}}, agent.Agent{})
	converse := func(n int) {
		t.Helper()
		for range n {
			res, err := f.run(t, "alice", "", "hello")
			if err != nil {
				t.Fatal(err)
			}
			// The next turn of the same conversation: its transcript is kept.
			if _, err := f.run(t, "alice", res.Conversation.ID, "and then?"); err != nil {
				t.Fatal(err)
			}
		}
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	converse(2 * capacity) // the registry is full from here on
	before := heap()
	const seen = 1000
	converse(seen)
	grew := int64(heap()) - int64(before)
	t.Logf("the heap grew by %d KiB over %d conversations", grew>>10, seen)

	held := f.core.Conversations().HeldNow()
	if held.Conversations > capacity || held.Transcripts > capacity || held.LiveTurns != 0 || held.Questions != 0 {
		t.Errorf("after %d conversations the core holds %+v; want at most %d conversations and transcripts, no turn, no question", 2*capacity+seen, held, capacity)
	}
	// A conversation held for good costs about a kilobyte (its entry, its
	// index, its transcript): a thousand of them, about a megabyte.
	const most = 512 << 10
	if grew > most {
		t.Errorf("the heap grew by %d KiB over %d conversations; want at most %d KiB", grew>>10, seen, most>>10)
	}
}

// forgetful answers at once and, unlike agenttest.Model, keeps no request.
type forgetful struct{}

func (forgetful) Chat(_ context.Context, _ agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	onDelta(agent.Delta{Content: "ok"})
	return agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant, Content: "ok"}, Model: "m"}, nil
}
