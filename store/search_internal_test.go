package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestSearchFindsHistoryStoredBeforeTheIndex: messages written by a
// version without the index (schema 11) are found once 0012 has indexed
// them, tool and system messages aside, and the triggers keep the index in
// step from then on.
func TestSearchFindsHistoryStoredBeforeTheIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := openConn(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, old, path, allMigrations(t)[:11]); err != nil {
		t.Fatalf("migrate to 11: %v", err)
	}
	for _, stmt := range []string{
		`INSERT INTO agents (id, slug, name, backend, created_at, updated_at) VALUES ('a1', 'helper', 'Helper', 'ollama', 1, 1)`,
		`INSERT INTO conversations (id, agent_id, principal, title, created_at, updated_at) VALUES ('c1', 'a1', 'local', 'Old one', 1, 1)`,
		`INSERT INTO turns (id, conversation_id, agent_id, principal, status, started_at) VALUES ('t1', 'c1', 'a1', 'local', 'completed', 1)`,
		`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES ('c1', 't1', 'user', 'Where is the aardvark?', 1000)`,
		`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES ('c1', 't1', 'tool', 'wombat in a file', 1001)`,
		`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES ('c1', 't1', 'assistant', 'The aardvark sleeps.', 1002)`,
	} {
		if _, err := old.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("write a version-11 row: %v\n%s", err, stmt)
		}
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	hits, err := db.SearchMessages(ctx, agent.SearchQuery{Text: "aardvark", Limit: 10})
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	if len(hits) != 1 || hits[0].ConversationID != "c1" || hits[0].Role != agent.RoleAssistant || hits[0].Snippet != "The [aardvark] sleeps." {
		t.Errorf("hits for a word stored before the upgrade = %+v, want c1's assistant message", hits)
	}
	for word, want := range map[string]int{"aardvark": 2, "wombat": 0} {
		if n := IndexedMatches(t, db, word); n != want {
			t.Errorf("index entries for %q = %d, want %d", word, n, want)
		}
	}

	// An update of a message (none is today) and a cascade keep the index right.
	if _, err := db.db.ExecContext(ctx, "UPDATE messages SET content = 'The pangolin sleeps.' WHERE role = 'assistant'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, "UPDATE messages SET role = 'user' WHERE role = 'tool'"); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string]int{"aardvark": 1, "pangolin": 1, "wombat": 1} {
		if n := IndexedMatches(t, db, word); n != want {
			t.Errorf("after updates, index entries for %q = %d, want %d", word, n, want)
		}
	}
	if _, err := db.db.ExecContext(ctx, "DELETE FROM conversations WHERE id = 'c1'"); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"aardvark", "pangolin", "wombat"} {
		if n := IndexedMatches(t, db, word); n != 0 {
			t.Errorf("after deleting the conversation, index entries for %q = %d, want 0", word, n)
		}
	}
}
