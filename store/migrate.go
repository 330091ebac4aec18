package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"
)

// migrationFiles holds the schema changes, one numbered file each
// (NNNN_name.sql). They are applied in order, never edited once released:
// a change to the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string // file name, for errors
	sql     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// loadMigrations reads the *.sql files at the root of fsys. Their versions
// must run 1, 2, 3… without gaps or repeats, so that a database's version
// says exactly which files it has seen.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	var migs []migration
	for _, name := range names {
		m := migrationName.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", name)
		}
		version, _ := strconv.Atoi(m[1])
		if want := len(migs) + 1; version != want {
			return nil, fmt.Errorf("migration %s: version %d, want %d (versions run 1, 2, 3… without gaps)", name, version, want)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		migs = append(migs, migration{version: version, name: name, sql: string(body)})
	}
	return migs, nil
}

var embeddedMigrations = sync.OnceValues(func() ([]migration, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	return loadMigrations(sub)
})

// NewerSchemaError is returned by Open for a database that a newer
// Deskhand has migrated past what this build knows: opening it could
// misread or damage data.
type NewerSchemaError struct {
	Path    string
	Version int // the database's schema version
	Known   int // the newest version this build knows
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("database %s was written by a newer Deskhand (schema %d, this build knows %d); upgrade Deskhand",
		e.Path, e.Version, e.Known)
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at INTEGER NOT NULL -- Unix milliseconds
) STRICT`

// migrate applies the migrations the database has not seen yet, each in
// its own transaction together with its schema_migrations row, so a crash
// leaves the database at a whole version. Running it again is a no-op.
func migrate(ctx context.Context, conn *sql.DB, dbPath string, migs []migration) error {
	if _, err := conn.ExecContext(ctx, createMigrationsTable); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	known := len(migs)
	current, err := schemaVersion(ctx, conn)
	if err != nil {
		return err
	}
	if current > known {
		return &NewerSchemaError{Path: dbPath, Version: current, Known: known}
	}
	for _, m := range migs[current:] {
		if err := applyMigration(ctx, conn, dbPath, m, known); err != nil {
			return fmt.Errorf("migrate to schema %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}

func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func applyMigration(ctx context.Context, conn *sql.DB, dbPath string, m migration, known int) error {
	// Migrations that must rebuild a table with foreign keys off (SQLite's
	// "12-step" ALTER) cannot do it in here: PRAGMA foreign_keys is a no-op
	// inside a transaction. Such a migration needs its own runner step.
	tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	// Another process may have migrated while this one waited for the lock.
	current, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if current > known {
		return &NewerSchemaError{Path: dbPath, Version: current, Known: known}
	}
	if current >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
		m.version, millis(time.Now())); err != nil {
		return fmt.Errorf("record migration: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
