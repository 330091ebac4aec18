package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Writes are committed in groups: callers hand their transaction to one
// writer goroutine, which runs every write waiting in one SQLite
// transaction and commits once. A commit
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

// commitGroup runs a group of writes in one transaction. Writes rarely
// fail, so the group runs without savepoints (they cost as much as the
// writes); when a write fails, the transaction is rolled back and each
// write of the group runs again in a transaction of its own, so the failed
// write leaves the others. When the transaction itself fails (the
// database is locked, the disk is full), every write gets that error.
func (db *DB) commitGroup(group []*writeJob) {
	errs, err := db.runGroup(group)
	var failed *writeFailed
	if errors.As(err, &failed) {
		if len(group) > 1 {
			for _, j := range group {
				j.done <- db.runAlone(j)
			}
			return
		}
		err = failed.err
	}
	for i, j := range group {
		if err != nil {
			j.done <- err
		} else {
			j.done <- errs[i]
		}
	}
}

// runAlone runs a write in a transaction of its own.
func (db *DB) runAlone(j *writeJob) error {
	errs, err := db.runGroup([]*writeJob{j})
	var failed *writeFailed
	if errors.As(err, &failed) {
		return failed.err
	}
	if err != nil {
		return err
	}
	return errs[0]
}

// writeFailed is a write's own failure, as opposed to the transaction's.
type writeFailed struct{ err error }

func (w *writeFailed) Error() string { return w.err.Error() }

// runGroup runs writes in one transaction and commits it, returning each
// write's outcome: a write given up before it ran gets its context's error
// and writes nothing. When a write fails, nothing is committed and the
// error is a *writeFailed.
func (db *DB) runGroup(group []*writeJob) ([]error, error) {
	ctx := context.Background() // an interrupted statement would roll back the whole group
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", busy(err))
	}
	errs := make([]error, len(group))
	for i, j := range group {
		if errs[i] = j.ctx.Err(); errs[i] != nil {
			continue
		}
		if err := j.fn(ctx, tx); err != nil {
			tx.Rollback()
			return nil, &writeFailed{err}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", busy(err))
	}
	return errs, nil
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
