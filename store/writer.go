package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Writes are committed in groups: callers hand their transaction to one
// writer goroutine, which runs every write waiting in one SQLite
// transaction and commits once. A commit costs about as much as the
// writes in it together, so under concurrent turns the writes share it;
// one writer also takes writers in turn, first come first served, where
// SQLite's busy handler sleeps and lets a writer starve past the busy
// timeout. A write is acknowledged only once its group is committed.

// maxGroup bounds the writes committed together.
const maxGroup = 64

// errClosed answers a write handed in after Close.
var errClosed = errors.New("the database is closed")

type writeJob struct {
	ctx context.Context
	fn  func(ctx context.Context, tx *sql.Tx) error // nil: a barrier (caughtUp)
	// behind marks a write nobody waits for yet: its commit may wait a
	// moment (linger) for an awaited write to share it.
	behind bool
	// activity makes the group commit the activity log's buffered rows
	// (activity.go), however few.
	activity bool
	// turnStart and turnEnd are a turn's start (BeginTurn) and end
	// (EndTurn): when both are in a group, the end is written with its
	// start (writeTurn).
	turnStart        *agent.TurnStart
	turnEnd          *turnEnd
	writtenWithStart bool // in this group (pairTurns)
	done             chan error
}

// linger is how long a group of writes nobody waits for yet waits for one
// that is awaited before it is committed on its own: long enough for an
// instant model's answer, far shorter than any real model's.
const linger = time.Millisecond

// The writer's connection does not checkpoint the WAL into the database
// file as it commits (SQLite's default every 1,000 pages), since a
// checkpoint syncs the file and would hold up the writes waiting: the
// checkpointer does it beside the writer, at most every checkpointEvery.
const checkpointEvery = 100 * time.Millisecond

func (db *DB) startWriter(ctx context.Context) error {
	w, err := db.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open the writer's connection: %w", err)
	}
	if _, err := w.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		w.Close()
		return fmt.Errorf("hand checkpoints to the checkpointer: %w", err)
	}
	db.writer = w
	db.jobs = make(chan *writeJob)
	db.linger = linger
	db.checkpointDue = make(chan struct{}, 1)
	db.activityDue = make(chan struct{}, 1)
	db.closing = make(chan struct{})
	db.writerDone = make(chan struct{})
	db.checkpointDone = make(chan struct{})
	go db.writeLoop()
	go db.checkpointLoop()
	return nil
}

func (db *DB) stopWriter() {
	db.stopOnce.Do(func() { close(db.closing) })
	<-db.writerDone
	<-db.checkpointDone
	db.writer.Close()
}

// checkpointLoop copies committed writes from the WAL into the database
// file after commits, without blocking the writer (a PASSIVE checkpoint).
func (db *DB) checkpointLoop() {
	defer close(db.checkpointDone)
	for {
		select {
		case <-db.checkpointDue:
		case <-db.closing:
			return // closing the last connection checkpoints
		}
		// A checkpoint that fails leaves the writes in the WAL, as durable
		// there; the next one tries again, and a failing disk shows in the
		// writes themselves.
		_, _ = db.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		select {
		case <-time.After(checkpointEvery):
		case <-db.closing:
			return
		}
	}
}

func (db *DB) writeLoop() {
	defer close(db.writerDone)
	// flush commits recorded activity that no other write took along
	// (activity.go).
	var flush <-chan time.Time
	// index adds new messages to the full-text index (search.go).
	var index <-chan time.Time
	for {
		select {
		case j := <-db.jobs:
			db.commitGroup(db.gather(j))
			if index == nil {
				index = time.After(indexEvery)
			}
		case <-index:
			index = nil
			if db.indexSome() {
				index = time.After(0)
			}
		case <-db.activityDue:
			if flush == nil {
				flush = time.After(activityLinger)
			}
		case <-flush:
			flush = nil
			db.flushActivity()
		case <-db.closing:
			db.flushActivity()
			return
		}
	}
}

// gather makes a group of first and the writes waiting behind it. A group
// of writes behind lingers for an awaited write to share its commit; any
// other takes only the writes already waiting.
func (db *DB) gather(first *writeJob) []*writeJob {
	group := []*writeJob{first}
	var lingering <-chan time.Time
	if first.behind {
		timer := time.NewTimer(db.linger)
		defer timer.Stop()
		lingering = timer.C
	}
	for len(group) < maxGroup {
		if lingering == nil {
			select {
			case j := <-db.jobs:
				group = append(group, j)
				continue
			default:
				return group
			}
		}
		select {
		case j := <-db.jobs:
			group = append(group, j)
			if !j.behind {
				lingering = nil
			}
		case <-lingering:
			lingering = nil
		case <-db.closing:
			lingering = nil
		}
	}
	return group
}

// commitGroup runs a group of writes in one transaction. Writes rarely
// fail, so the group runs without savepoints (they cost as much as the
// writes); when a write fails, the transaction is rolled back and each
// write of the group runs again in a transaction of its own, so the failed
// write leaves the others. When the transaction itself fails (the
// database is locked, the disk is full), every write gets that error.
func (db *DB) commitGroup(group []*writeJob) {
	if !slices.ContainsFunc(group, func(j *writeJob) bool { return j.fn != nil }) {
		for _, j := range group {
			j.done <- nil // barriers only: nothing to write
		}
		return
	}
	errs, err := db.runGroup(group)
	var failed *writeFailed
	if errors.As(err, &failed) {
		if len(group) > 1 {
			for _, j := range group {
				if j.fn == nil {
					j.done <- nil
				} else {
					j.done <- db.runAlone(j)
				}
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
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", busy(err))
	}
	var activity []agent.ActivityRow
	if db.activityRides(group) {
		activity = db.writeActivity(ctx, tx)
	}
	errs := make([]error, len(group))
	endOf := pairTurns(group)
	for i, j := range group {
		if errs[i] = j.ctx.Err(); errs[i] != nil || j.fn == nil || j.writtenWithStart {
			continue
		}
		fn := j.fn
		if end, ok := endOf[i]; ok {
			fn = func(ctx context.Context, tx *sql.Tx) error {
				return writeTurn(ctx, tx, *j.turnStart, group[end].turnEnd)
			}
		}
		if err := fn(ctx, tx); err != nil {
			tx.Rollback()
			db.requeueActivity(activity)
			return nil, &writeFailed{err}
		}
	}
	for start, end := range endOf {
		errs[end] = errs[start]
	}
	if err := tx.Commit(); err != nil {
		db.requeueActivity(activity)
		return nil, fmt.Errorf("commit: %w", busy(err))
	}
	select {
	case db.checkpointDue <- struct{}{}:
	default:
	}
	return errs, nil
}

// pairTurns maps the start of each turn whose end follows it in group to
// that end, and marks the end written with its start (writeTurn). An end
// given up by its caller, or of another conversation, is not taken.
func pairTurns(group []*writeJob) (endOf map[int]int) {
	var starts map[string]int
	for i, j := range group {
		j.writtenWithStart = false // a group run again after a failure pairs again
		switch {
		case j.turnStart != nil:
			if starts == nil {
				starts = map[string]int{}
			}
			starts[j.turnStart.Turn.ID] = i
		case j.turnEnd != nil && j.ctx.Err() == nil:
			t := j.turnEnd.turn
			if s, ok := starts[t.ID]; ok && group[s].turnStart.Turn.ConversationID == t.ConversationID {
				if endOf == nil {
					endOf = map[int]int{}
				}
				endOf[s], j.writtenWithStart = i, true
			}
		}
	}
	return endOf
}

// inTx runs fn in a transaction, with the writes of other callers, and
// returns once it is committed (or failed, leaving nothing).
func (db *DB) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.queue(ctx, false, fn)()
}

// caughtUp returns once every write queued before it is committed, so
// that a read after it sees them (a turn's start queued while its model
// works included). It writes nothing, and takes no lock when nothing is
// queued.
func (db *DB) caughtUp(ctx context.Context) error {
	return db.queue(ctx, false, nil)()
}

// queue hands fn to the writer and returns a function that waits for its
// commit. A write behind is not given up with its caller's context: it
// was queued, so the writes after it can count on it.
func (db *DB) queue(ctx context.Context, behind bool, fn func(ctx context.Context, tx *sql.Tx) error) (committed func() error) {
	if behind {
		ctx = context.WithoutCancel(ctx)
	}
	return db.enqueue(&writeJob{ctx: ctx, fn: fn, behind: behind, done: make(chan error, 1)})
}

// enqueue hands a job to the writer and returns a function that waits for
// its commit.
func (db *DB) enqueue(j *writeJob) (committed func() error) {
	select {
	case db.jobs <- j:
	case <-db.closing:
		return func() error { return errClosed }
	}
	return sync.OnceValue(func() error { return <-j.done })
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
