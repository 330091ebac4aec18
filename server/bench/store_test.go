package bench

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/mattn/go-sqlite3"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

const (
	millionMessages = 1_000_000
	conversations   = 10_000 // of 100 messages, 50 turns each
)

// fillMillion writes a store holding a million messages, directly in one
// transaction (the store's API commits each turn, too slow to fill).
func fillMillion(b *testing.B) (string, []string) {
	path := filepath.Join(b.TempDir(), store.FileName)
	storetest.OpenAt(b, path).Close() // migrated, then filled directly
	raw, err := sql.Open("sqlite3", path+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
	exec(`INSERT INTO agents (id, slug, name, backend, created_at, updated_at) VALUES ('a', 'assistant', 'Assistant', 'ollama', ?, ?)`, now, now)
	convStmt, _ := tx.Prepare(`INSERT INTO conversations (id, agent_id, principal, created_at, updated_at) VALUES (?, 'a', 'p', ?, ?)`)
	turnStmt, _ := tx.Prepare(`INSERT INTO turns (id, conversation_id, agent_id, principal, status, started_at, ended_at) VALUES (?, ?, 'a', 'p', 'completed', ?, ?)`)
	msgStmt, _ := tx.Prepare(`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
	ids := make([]string, conversations)
	for c := range conversations {
		ids[c] = uuid.NewString()
		if _, err := convStmt.Exec(ids[c], now, now); err != nil {
			b.Fatal(err)
		}
	}
	// Interleaved as real use writes them: turn by turn across conversations.
	for turn := range millionMessages / conversations / 2 {
		for c := range conversations {
			tid := fmt.Sprintf("%s-%d", ids[c], turn)
			if _, err := turnStmt.Exec(tid, ids[c], now, now); err != nil {
				b.Fatal(err)
			}
			for _, role := range []string{"user", "assistant"} {
				if _, err := msgStmt.Exec(ids[c], tid, role, "a message of an ordinary length, about as long as people write them", now); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return path, ids
}

// BenchmarkStoreAtAMillionMessages: a turn appended (question and answer,
// committed together as the core does when the model answers at once) and the last 50 messages of a conversation loaded, with a
// million messages stored.
func BenchmarkStoreAtAMillionMessages(b *testing.B) {
	path, ids := fillMillion(b) // once: a benchmark with sub-benchmarks runs once
	db := storetest.OpenAt(b, path)
	if n, _ := db.CountMessages(context.Background()); n != millionMessages {
		b.Fatalf("%d messages stored", n)
	}
	ctx := context.Background()
	b.Run("append a turn", func(b *testing.B) {
		lat, elapsed := load(b, 1, func(int) error {
			conv := ids[rand.IntN(len(ids))]
			t := agent.Turn{ID: uuid.NewString(), ConversationID: conv, AgentID: "a", Principal: "p", Status: agent.TurnRunning, StartedAt: time.Now()}
			begun := db.BeginTurn(ctx, agent.TurnStart{Turn: t, User: agent.Message{Role: agent.RoleUser, Content: "q", TurnID: t.ID, CreatedAt: t.StartedAt}})
			t.Status = agent.TurnCompleted
			err := db.EndTurn(ctx, t, []agent.Message{{Role: agent.RoleAssistant, Content: "a", TurnID: t.ID, CreatedAt: time.Now()}})
			return cmp.Or(begun(), err)
		})
		r := summarize("deskhand", "", "store: append a turn at 1M messages", 1, lat, elapsed)
		record(r)
		b.ReportMetric(r.P50Micros, "p50-µs")
	})
	b.Run("load the last 50", func(b *testing.B) {
		lat, elapsed := load(b, 1, func(int) error {
			msgs, err := db.LastMessages(ctx, ids[rand.IntN(len(ids))], 50)
			if err == nil && len(msgs) != 50 {
				err = fmt.Errorf("%d messages", len(msgs))
			}
			return err
		})
		r := summarize("deskhand", "", "store: load the last 50 at 1M messages", 1, lat, elapsed)
		record(r)
		b.ReportMetric(r.P50Micros, "p50-µs")
	})
}
