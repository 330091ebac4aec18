package store

import (
	"context"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestDeletingConversationDeletesQuestions: nothing deletes conversations
// yet, but when something does, its turns, messages and questions go with
// it (the foreign keys cascade) instead of blocking the delete.
func TestDeletingConversationDeletesQuestions(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if err := db.PutAgent(ctx, agent.Agent{ID: "a", Slug: "a", Backend: agent.BackendOllama}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateConversation(ctx, agent.Conversation{ID: "c", AgentID: "a", Principal: "p"}); err != nil {
		t.Fatal(err)
	}
	turn := agent.Turn{ID: "t", ConversationID: "c", AgentID: "a", Principal: "p", Status: agent.TurnRunning}
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: agent.Message{Role: agent.RoleUser, Content: "hi"}})(); err != nil {
		t.Fatal(err)
	}
	q := agent.Question{ID: "q", Kind: agent.KindQuestion, ConversationID: "c", TurnID: "t", Status: agent.QuestionPending}
	if err := db.PutQuestion(ctx, q); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, "DELETE FROM conversations WHERE id = 'c'"); err != nil {
		t.Fatalf("delete the conversation: %v", err)
	}
	for _, table := range []string{"turns", "messages", "questions"} {
		var n int
		if err := db.db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows left after deleting their conversation", table, n)
		}
	}
}
