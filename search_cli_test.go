package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
)

// TestSearchFindsOldConversations is the acceptance of search over all
// history: a word in a conversation older than the 200 most recent is
// found by 'deskhand search', on the store and through the running app.
func TestSearchFindsOldConversations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	a := agent.Agent{ID: "a1", Slug: "helper", Name: "Helper", Backend: agent.BackendProvider, Provider: agent.OllamaProvider,
		Model: ollamatest.DefaultModel, Conversations: true, Enabled: true, CreatedAt: start, UpdatedAt: start}
	if err := db.PutAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	for i := range 205 {
		at := start.Add(time.Duration(i) * time.Second)
		text := fmt.Sprintf("ordinary question number %d", i)
		if i == 0 {
			text = "where does the aardvark sleep?"
		}
		id := fmt.Sprintf("conv-%03d", i)
		conv := agent.Conversation{ID: id, AgentID: a.ID, Principal: agent.LocalPrincipal, Title: fmt.Sprintf("Talk %d", i), CreatedAt: at, UpdatedAt: at}
		turn := agent.Turn{ID: "turn-" + id, ConversationID: id, AgentID: a.ID, Principal: agent.LocalPrincipal, Status: agent.TurnRunning, StartedAt: at}
		if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, NewConversation: &conv, User: agent.Message{Role: agent.RoleUser, Content: text, CreatedAt: at}})(); err != nil {
			t.Fatal(err)
		}
	}
	recent, err := db.RecentConversations(ctx, 200)
	if err != nil || recent[len(recent)-1].ID == "conv-000" {
		t.Fatalf("the 200 most recent = %d, %v; want conv-000 not among them", len(recent), err)
	}
	db.Close()

	check := func(how string) {
		t.Helper()
		stdout, stderr, err := deskhand(t, "--data", dir, "search", "Aardvark")
		if err != nil || !strings.Contains(stdout, "Talk 0 ") || !strings.Contains(stdout, "the [aardvark] sleep") || strings.Count(stdout, "\n") != 2 {
			t.Errorf("%s: deskhand search Aardvark: %v\n%s%s", how, err, stdout, stderr)
		}
	}
	check("on the store")
	srv := startServeIn(t, ollamatest.NewServer(t), dir)
	check("through the running app")
	srv.stop(t)
}
