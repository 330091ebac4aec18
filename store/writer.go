package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Writes are committed in groups: callers hand their transaction to one
// writer goroutine, which runs every write waiting in one SQLite
// transaction, each in a savepoint of its own, and commits once. A commit
// costs about as much as the writes in it together, so under concurrent
// turns the writes share it; one writer also takes writers in turn, first
// come first served, where SQLite's busy handler sleeps and lets a writer
// starve past the busy timeout. A write is acknowledged only once its
// group is committed, so durability is what it was.

// maxGroup bounds the writes committed together.
const maxGroup = 64

// errClosed answers a write handed in after Close.
var errClosed = errors.New("the database is closed")

type writeJob struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error
}

func (db *DB) startWriter() {
	db.jobs = make(chan *writeJob)
	db.closing = make(chan struct{})
	db.writerDone = make(chan struct{})
	go db.writeLoop()
}

func (db *DB) stopWriter() {
	db.stopOnce.Do(func() { close(db.closing) })
	<-db.writerDone
}

func (db *DB) writeLoop() {
	defer close(db.writerDone)
	for {
		var group []*writeJob
		select {
		case j := <-db.jobs:
			group = append(group, j)
		case <-db.closing:
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case j := <-db.jobs:
				group = append(group, j)
			default:
				break more
			}
		}
		db.commitGroup(group)
	}
}

// commitGroup runs a group of writes in one transaction. A write that
// fails is rolled back to its savepoint, leaving the others; if the
// transaction itself fails, every write of the group gets that error.
func (db *DB) commitGroup(group []*writeJob) {
	ctx := context.Background() // an interrupted statement would roll back the whole group
	fail := func(err error) {
		for _, j := range group {
			j.done <- err
		}
	}
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("begin transaction: %w", busy(err)))
		return
	}
	errs := make([]error, len(group))
	for i, j := range group {
		if err := j.ctx.Err(); err != nil {
			errs[i] = err // given up before it ran: nothing written
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT write"); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("savepoint: %w", err))
			return
		}
		if errs[i] = j.fn(ctx, tx); errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO write"); err != nil {
				tx.Rollback()
				fail(fmt.Errorf("roll back a failed write: %w", err))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE write"); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("commit: %w", busy(err)))
		return
	}
	for i, j := range group {
		j.done <- errs[i]
	}
}

// inTx runs fn in a transaction, with the writes of other callers, and
// returns once it is committed (or failed, leaving nothing).
func (db *DB) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	j := &writeJob{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case db.jobs <- j:
	case <-db.closing:
		return errClosed
	}
	return <-j.done
}

// exec runs one statement as a write.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, busy(err)
}
