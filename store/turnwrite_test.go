package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestTurnEndWrittenWithItsStart: a turn that ends while its start still
// waits for a commit (a model that answers at once) is written in one go,
// without updating the turn row after inserting it, and reads back exactly
// as a turn whose start was committed first: its conversation, turns and
// messages, for a turn that starts a conversation and one that continues
// it.
func TestTurnEndWrittenWithItsStart(t *testing.T) {
	type written struct {
		conv        agent.Conversation
		turns       []agent.Turn
		msgs        []agent.Message
		turnUpdates int
	}
	write := func(t *testing.T, together bool) written {
		db := storetest.Open(t)
		if together {
			db.SetLinger(time.Hour) // the start waits for the end
		}
		for _, q := range []string{
			"CREATE TABLE turn_updates (turn_id TEXT)",
			"CREATE TRIGGER count_turn_updates AFTER UPDATE ON turns BEGIN INSERT INTO turn_updates VALUES (new.id); END",
		} {
			if err := db.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		a := putAgent(t, db, "quick")
		conv := agent.Conversation{ID: "c1", AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(1), UpdatedAt: at(1)}
		for i, startMs := range []int{1, 100} {
			turn, user := runningTurn(conv, []string{"t1", "t2"}[i], at(startMs))
			start := agent.TurnStart{Turn: turn, User: user}
			if i == 0 {
				start.NewConversation = &conv
			}
			committed := db.BeginTurn(ctx, start)
			if !together {
				if err := committed(); err != nil {
					t.Fatalf("BeginTurn: %v", err)
				}
			}
			produced := []agent.Message{
				{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "k", Name: "look", Arguments: json.RawMessage(`{"q":1}`)}}, TurnID: turn.ID, CreatedAt: at(startMs + 2)},
				{Role: agent.RoleTool, Content: "found", ToolCallID: "k", ToolName: "look", TurnID: turn.ID, CreatedAt: at(startMs + 3)},
				{Role: agent.RoleAssistant, Content: "answer", TurnID: turn.ID, CreatedAt: at(startMs + 4)},
			}
			turn.Status, turn.EndedAt = agent.TurnCompleted, at(startMs+5)
			turn.PromptTokens, turn.OutputTokens, turn.ToolCalls = 120, 30, 1
			if err := db.EndTurn(ctx, turn, produced); err != nil {
				t.Fatalf("EndTurn: %v", err)
			}
			if err := committed(); err != nil {
				t.Fatalf("BeginTurn: %v", err)
			}
		}
		var w written
		var err error
		if w.conv, err = db.Conversation(ctx, conv.ID); err != nil {
			t.Fatal(err)
		}
		if w.turns, err = db.Turns(ctx, conv.ID); err != nil {
			t.Fatal(err)
		}
		if w.msgs, err = db.Messages(ctx, conv.ID); err != nil {
			t.Fatal(err)
		}
		if w.turnUpdates, err = db.Count(ctx, "SELECT COUNT(*) FROM turn_updates"); err != nil {
			t.Fatal(err)
		}
		return w
	}
	apart, together := write(t, false), write(t, true)
	if apart.turnUpdates != 2 {
		t.Errorf("turns committed before their ends were updated %d times, want 2", apart.turnUpdates)
	}
	if together.turnUpdates != 0 {
		t.Errorf("turns that ended before their starts were committed were updated %d times, want 0 (written once)", together.turnUpdates)
	}
	if diff := cmp.Diff(apart, together, cmp.AllowUnexported(written{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".turnUpdates"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("written together, the turns read back otherwise (-apart +together):\n%s", diff)
	}
	if len(together.turns) != 2 || together.turns[1].Status != agent.TurnCompleted || !together.conv.UpdatedAt.Equal(at(105)) {
		t.Errorf("turns %+v, conversation updated at %v, want two completed turns and %v", together.turns, together.conv.UpdatedAt, at(105))
	}
}

// A turn's end for another conversation than its start's is not written
// with the start: it fails as EndTurn does alone, and the start stays.
func TestTurnEndOfAnotherConversationIsNotPaired(t *testing.T) {
	db := storetest.Open(t)
	db.SetLinger(time.Hour)
	a := putAgent(t, db, "quick")
	conv := agent.Conversation{ID: "c1", AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(1), UpdatedAt: at(1)}
	turn, user := runningTurn(conv, "t1", at(1))
	committed := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user, NewConversation: &conv})
	wrong := turn
	wrong.ConversationID, wrong.Status, wrong.EndedAt = "c2", agent.TurnCompleted, at(2)
	if err := db.EndTurn(ctx, wrong, nil); err == nil {
		t.Fatal("an end naming another conversation was written")
	}
	if err := committed(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	turns, err := db.Turns(ctx, conv.ID)
	if err != nil || len(turns) != 1 || turns[0].Status != agent.TurnRunning {
		t.Fatalf("turns %+v, %v: want the one begun, still running", turns, err)
	}
}
