package ollama_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

// countingServer is the fake Ollama counting the connections opened to it.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv, opened := modeltest.ConnCounter(t, ollamatest.Handler())
	t.Cleanup(ollama.CloseIdleConnections) // runs first: the server then closes at once
	return srv, opened
}

func chat(ctx context.Context, m *ollama.Model) error {
	_, err := m.Chat(ctx, agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, func(agent.Delta) {})
	return err
}

// TestConcurrentChatsKeepTheirConnections: with the default HTTP client,
// turns that chat at once reuse their connections to Ollama instead of
// opening one per chat (net/http's default keeps 2 idle per host).
func TestConcurrentChatsKeepTheirConnections(t *testing.T) {
	srv, opened := countingServer(t)
	m, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := chat(t.Context(), m); err != nil { // the model's facts (/api/show), cached from now on
		t.Fatal(err)
	}
	const rounds, turns = 5, 16
	modeltest.ChatInRounds(t, m, model, rounds, turns)
	// At most DefaultMaxChats stream at once, each on a connection of its
	// own. A chat may start dialling just before another's connection is
	// back in the pool (net/http then keeps both), so a few more may open;
	// without a pool, about one chat in three opens one.
	if n := opened.Load(); n > 2*ollama.DefaultMaxChats {
		t.Errorf("%d chats, %d at once, opened %d connections; want at most %d", 1+rounds*turns, ollama.DefaultMaxChats, n, 2*ollama.DefaultMaxChats)
	}
}

// TestChatAllocatesNoStreamBuffer: a streamed chat allocates what its
// lines need, not a buffer of megabytes (ollama/api's client allocates
// 8 MB for every stream).
func TestChatAllocatesNoStreamBuffer(t *testing.T) {
	srv, _ := countingServer(t)
	m, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := chat(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	const chats = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range chats {
		if err := chat(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The fake's own allocations, in this process, are counted too: a few
	// kilobytes a chat.
	const most = 256 << 10
	if perChat := (after.TotalAlloc - before.TotalAlloc) / chats; perChat > most {
		t.Errorf("a chat allocated %d KiB (the fake's side included); want at most %d KiB", perChat>>10, most>>10)
	}
}
