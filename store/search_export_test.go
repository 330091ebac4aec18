package store

import (
	"context"
	"testing"
)

// IndexedMatches counts the full-text index's entries for a word, read
// from the index alone (a stale entry, whose message is gone, counts).
func IndexedMatches(t *testing.T, db *DB, word string) int {
	t.Helper()
	var n int
	if err := db.db.QueryRowContext(context.Background(),
		"SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", ftsQuery(word)).Scan(&n); err != nil {
		t.Fatalf("count index entries for %q: %v", word, err)
	}
	return n
}

// IndexNow adds every message not indexed yet to the full-text index, as
// the writer does in the background and a search does first.
func IndexNow(t *testing.T, db *DB) {
	t.Helper()
	if err := db.inTx(context.Background(), indexAll); err != nil {
		t.Fatalf("index: %v", err)
	}
}
