package openai_test

import (
	"testing"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
)

// TestConcurrentChatsKeepTheirConnections: with the default HTTP client,
// turns that chat at once reuse their connections to the server instead
// of opening one per chat (net/http's default keeps 2 idle per host).
func TestConcurrentChatsKeepTheirConnections(t *testing.T) {
	srv, opened := modeltest.ConnCounter(t, openaitest.Handler())
	t.Cleanup(openai.CloseIdleConnections) // runs first: the server then closes at once
	m, err := openai.New(srv.URL+"/v1", openai.WithKind(openai.KindCompatible))
	if err != nil {
		t.Fatal(err)
	}
	const rounds, turns = 5, 16
	modeltest.ChatInRounds(t, m, model, rounds, turns)
	// Each turn of the first round may need a connection of its own; the
	// later rounds find them idle. A chat may start dialling just before
	// another's connection is back in the pool (net/http then keeps both),
	// so a few more may open; without a pool, most chats open one.
	if n := opened.Load(); n > 2*turns {
		t.Errorf("%d chats, %d at once, opened %d connections; want at most %d", rounds*turns, turns, n, 2*turns)
	}
}
