package storetest

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/deskhand/deskhand/store"
)

// FillConversations stores n conversations of one agent ("assistant"),
// each with one completed turn of a question and an answer, straight into
// a fresh database at path (migrated first), one transaction, as
// benchmarks of a full history need them. It returns the conversations'
// IDs, oldest first; each is a millisecond younger than the one before.
func FillConversations(tb testing.TB, path string, n int) []string {
	tb.Helper()
	ones := make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	return FillTurns(tb, path, ones...)
}

// FillTurns is FillConversations with a conversation for each count of
// turns, its turns a millisecond apart.
func FillTurns(tb testing.TB, path string, turns ...int) []string {
	tb.Helper()
	total := 0
	for _, n := range turns {
		total += n
	}
	OpenAt(tb, path).Close() // migrated, then filled directly
	raw, err := sql.Open("sqlite3", path+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		tb.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	start := time.Now().Add(-time.Duration(total) * time.Millisecond).UnixMilli()
	prepare := func(q string) *sql.Stmt {
		s, err := tx.Prepare(q)
		if err != nil {
			tb.Fatalf("fill %s: %v", store.FileName, err)
		}
		return s
	}
	if _, err := tx.Exec(`INSERT INTO agents (id, slug, name, backend, created_at, updated_at) VALUES ('a', 'assistant', 'Assistant', 'ollama', ?, ?)`, start, start); err != nil {
		tb.Fatal(err)
	}
	conv := prepare(`INSERT INTO conversations (id, agent_id, principal, title, created_at, updated_at) VALUES (?, 'a', 'local', ?, ?, ?)`)
	turn := prepare(`INSERT INTO turns (id, conversation_id, agent_id, principal, status, started_at, ended_at) VALUES (?, ?, 'a', 'local', 'completed', ?, ?)`)
	msg := prepare(`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
	ids := make([]string, len(turns))
	at := start
	for i, n := range turns {
		ids[i] = fmt.Sprintf("conv-%07d", i)
		if _, err := conv.Exec(ids[i], fmt.Sprintf("conversation %d", i), at, at+int64(n-1)); err != nil {
			tb.Fatal(err)
		}
		for k := range n {
			tid := fmt.Sprintf("%s-t%d", ids[i], k+1)
			if _, err := turn.Exec(tid, ids[i], at+int64(k), at+int64(k)); err != nil {
				tb.Fatal(err)
			}
			for _, role := range []string{"user", "assistant"} {
				if _, err := msg.Exec(ids[i], tid, role, "a message of an ordinary length, about as long as people write them", at+int64(k)); err != nil {
					tb.Fatal(err)
				}
			}
		}
		at += int64(n)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	return ids
}
