package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// openTest opens a migrated database in t.TempDir(), closed at cleanup.
// (storetest.Open cannot be used here: it imports this package.)
func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenPragmas(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.db.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES ('k', 'v')"); err != nil {
		t.Fatal(err)
	}
	// Pragmas are per connection: hold several at once so that more than
	// one connection of the pool is checked.
	var conns []*sql.Conn
	for range 3 {
		conn, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		for _, tc := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"synchronous", "1"}, // NORMAL
			{"foreign_keys", "1"},
			{"busy_timeout", "5000"},
		} {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	// In WAL mode a write goes to the -wal file first.
	if fi, err := os.Stat(db.Path() + "-wal"); err != nil {
		t.Errorf("WAL file after a write: %v", err)
	} else if fi.Size() == 0 {
		t.Errorf("WAL file %s is empty after a write", fi.Name())
	}
}

func TestOpenCreatesPrivateFolderAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "Deskhand", FileName)
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	if runtime.GOOS == "windows" {
		return // no Unix modes
	}
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Dir(path), 0o700 | os.ModeDir},
		{path, 0o600},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != tc.want {
			t.Errorf("mode of %s = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestOpenRefusesNonFilePaths(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path string
	}{
		{"empty", ""},
		{"memory", ":memory:"},
		{"uri", "file:" + filepath.Join(dir, "x.db")},
		{"question mark", filepath.Join(dir, "what?.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(context.Background(), tc.path)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tc.path)
			}
			if !strings.Contains(err.Error(), "open database") {
				t.Errorf("Open(%q) error %q does not say what failed", tc.path, err)
			}
		})
	}
}
