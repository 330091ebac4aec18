package anthropic_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/server/agent"
)

// TestConcurrentChatsKeepTheirConnections: with the default HTTP client,
// turns that chat at once reuse their connections to the API instead of
// opening one per chat (net/http's default keeps 2 idle per host).
func TestConcurrentChatsKeepTheirConnections(t *testing.T) {
	const key = "sk-ant-test-transport"
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(anthropictest.Handler(anthropictest.WithAPIKey(key)))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close) // closes the idle connections too
	m, err := anthropic.New(srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	const rounds, turns = 5, 16
	errs := make([]error, turns)
	for range rounds {
		var wg sync.WaitGroup
		for i := range turns {
			wg.Go(func() {
				_, errs[i] = m.Chat(t.Context(), agent.ChatRequest{Model: anthropictest.DefaultModel, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, func(agent.Delta) {})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	// Each turn of the first round may need a connection of its own; the
	// later rounds find them idle. A chat may start dialling just before
	// another's connection is back in the pool (net/http then keeps both),
	// so a few more may open; without a pool, most chats open one.
	if n := opened.Load(); n > 2*turns {
		t.Errorf("%d chats, %d at once, opened %d connections; want at most %d", rounds*turns, turns, n, 2*turns)
	}
}
