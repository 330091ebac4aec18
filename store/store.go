// Package store keeps Deskhand's data in SQLite: everything the core
// keeps (agents and the providers they run on, teams, tool servers,
// clients with their token hashes and what each sees, conversations,
// turns, messages, questions, approval rules, the activity log, the
// search index, settings); never a secret value. [DB] implements
// [agent.History] and the core's other store ports; it is the only
// package that imports database/sql and go-sqlite3. The tables are those
// the migrations in migrations/ make.
//
// The database runs in WAL mode with synchronous=NORMAL: a committed
// transaction survives a crash of the process but not necessarily a power
// cut. Foreign keys are enforced, writers wait up to 5 s for each other
// (busy timeout), and every transaction takes the write lock when it begins
// (BEGIN IMMEDIATE), so a read never has to be upgraded into a write that
// could fail with SQLITE_BUSY.
//
// The schema is created and upgraded by the numbered SQL files embedded
// from migrations/, each applied in its own transaction and recorded in
// the schema_migrations table. A database written by a newer Deskhand is
// refused with a [*NewerSchemaError].
//
// Times are stored as INTEGER milliseconds since the Unix epoch and read
// back in UTC: they round-trip at millisecond precision (anything finer is
// truncated), and a zero time.Time is stored as NULL where a column may be
// unset (a turn's end, a client's last use or revocation).
package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// FileName is the database's file name inside Deskhand's data folder;
// main decides the folder.
const FileName = "deskhand.db"

// DB is Deskhand's SQLite database. It is safe for concurrent use.
type DB struct {
	db   *sql.DB
	path string
	// The writer goroutine, its connection and its queue, and the
	// checkpointer (writer.go).
	writer         *sql.Conn
	jobs           chan *writeJob
	linger         time.Duration // see linger
	checkpointDue  chan struct{}
	closing        chan struct{}
	writerDone     chan struct{}
	checkpointDone chan struct{}
	stopOnce       sync.Once

	// The activity log's rows waiting for a commit (activity.go).
	activity    activityBuf
	activityDue chan struct{}
}

// maxConns bounds the connections: each holds its own page cache, and
// one per concurrent request grew the process by gigabytes under load.
const maxConns = 8

var _ agent.History = (*DB)(nil)

// dsnParams are the connection settings go-sqlite3 applies to every
// connection of the pool.
//   - WAL lets readers run while one writer writes; with synchronous=NORMAL a
//     commit is durable against a process crash (not a power cut) without an
//     fsync per transaction.
//   - SQLite does not enforce foreign keys unless told to, per connection.
//   - The busy timeout makes a writer wait for another instead of failing.
//   - BEGIN IMMEDIATE takes the write lock at the start of a transaction, so
//     the busy timeout applies to it; a deferred transaction that reads and
//     then writes can fail at once with SQLITE_BUSY.
const dsnParams = "_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on&_busy_timeout=5000&_txlock=immediate&_stmt_cache_size=32"

// Open opens (creating it if needed) the database at path, creating its
// folder with mode 0700, checks that the connection settings took effect
// and brings the schema up to date. A database written by a newer Deskhand
// is refused with a *NewerSchemaError.
func Open(ctx context.Context, path string) (*DB, error) {
	migs, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	conn, err := openConn(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, conn, path, migs); err != nil {
		conn.Close()
		return nil, busy(err)
	}
	db := &DB{db: conn, path: path}
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM activity").Scan(&db.activity.lastID); err != nil {
		conn.Close()
		return nil, fmt.Errorf("read the activity log: %w", busy(err))
	}
	if err := db.startWriter(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return db, nil
}

// ErrBusy means another connection (another process) kept the database
// locked for longer than the busy timeout.
var ErrBusy = &agent.UserError{Msg: "the database is locked by another program (a database browser, or a copy of Deskhand working on the same data folder): close it and try again"}

// busy marks a locked-database error as ErrBusy, so a person is told.
func busy(err error) error {
	if isBusy(err) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return err
}

// openConn opens the database without touching its schema.
func openConn(ctx context.Context, path string) (*sql.DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open database: %q is not a file path", path)
	}
	// go-sqlite3 reads everything after the first '?' as parameters.
	if strings.Contains(path, "?") {
		return nil, fmt.Errorf("open database %s: the path may not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	// Create the file ourselves so that it (and the -wal and -shm files,
	// which SQLite gives the same mode) is readable by the user only: it
	// holds conversations and token hashes.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	f.Close()

	conn, err := sql.Open("sqlite3", path+"?"+dsnParams)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	conn.SetMaxOpenConns(maxConns)
	conn.SetMaxIdleConns(maxConns)
	if err := checkPragmas(ctx, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return conn, nil
}

// checkPragmas verifies that the DSN settings took effect: go-sqlite3
// ignores parameters it does not know, and a journal mode can silently stay
// as it was (for instance on a file system without shared memory).
func checkPragmas(ctx context.Context, conn *sql.DB) error {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	for _, p := range []struct {
		name string
		want int
	}{
		{"foreign_keys", 1},
		{"synchronous", 1}, // NORMAL
	} {
		var got int
		if err := conn.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(&got); err != nil {
			return fmt.Errorf("read %s: %w", p.name, err)
		}
		if got != p.want {
			return fmt.Errorf("%s is %d, want %d", p.name, got, p.want)
		}
	}
	return nil
}

// Close closes the database; a clean close checkpoints the WAL into the
// main file.
func (db *DB) Close() error {
	db.stopWriter()
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// Path is the database file's path as given to Open.
func (db *DB) Path() string { return db.path }

// Times: INTEGER Unix milliseconds, read back in UTC.

func millis(t time.Time) int64 { return t.UnixMilli() }

// nullMillis stores the zero time as NULL.
func nullMillis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func fromNullMillis(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromMillis(n.Int64)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
