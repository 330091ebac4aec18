package anthropic_test

import (
	"testing"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
)

// TestConcurrentChatsKeepTheirConnections: with the default HTTP client,
// turns that chat at once reuse their connections to the API instead of
// opening one per chat (net/http's default keeps 2 idle per host).
func TestConcurrentChatsKeepTheirConnections(t *testing.T) {
	const key = "sk-ant-test-transport"
	srv, opened := modeltest.ConnCounter(t, anthropictest.Handler(anthropictest.WithAPIKey(key))) // its Close closes the idle connections too
	m, err := anthropic.New(srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	const rounds, turns = 5, 16
	modeltest.ChatInRounds(t, m, anthropictest.DefaultModel, rounds, turns)
	// Each turn of the first round may need a connection of its own; the
	// later rounds find them idle. A chat may start dialling just before
	// another's connection is back in the pool (net/http then keeps both),
	// so a few more may open; without a pool, most chats open one.
	if n := opened.Load(); n > 2*turns {
		t.Errorf("%d chats, %d at once, opened %d connections; want at most %d", rounds*turns, turns, n, 2*turns)
	}
}
