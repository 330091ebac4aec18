// Package storetest opens throwaway [store.DB] databases for tests.
//
// They are real files in t.TempDir(), never ":memory:": database/sql pools
// connections, and each connection to ":memory:" gets its own empty
// database.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/store"
)

// Open opens a fresh, fully migrated database in a file under tb.TempDir()
// and closes it when the test ends. It stops the test if that fails.
func Open(tb testing.TB) *store.DB {
	tb.Helper()
	return OpenAt(tb, filepath.Join(tb.TempDir(), store.FileName))
}

// OpenAt opens (or reopens) the database in the file at path, for tests
// that close a database and open it again, and closes it when the test
// ends. The test may close it sooner: closing it again is harmless. It
// stops the test if opening fails.
func OpenAt(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close test database: %v", err)
		}
	})
	return db
}
