package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// The activity log (agent.ActivityRecorder). A recorded row waits in a
// bounded buffer in memory and is written by the writer goroutine, never
// on the recorder's. Under load it rides a group of writes the writer
// commits anyway (a group of several, or any once activityRide rows wait),
// adding no commit; otherwise the rows wait up to activityLinger for a
// commit of their own, so that a lone client's call never waits on log
// rows: at most a few extra commits a second, whatever the load. A full
// buffer drops rows and counts them; the next rows written carry a row
// that says how many went.

var _ agent.ActivityRecorder = (*DB)(nil)

// activityBuffer bounds the rows waiting for a commit.
const activityBuffer = 8192

// activityLinger is how long recorded rows wait for a group of writes
// to ride before they are committed on their own; activityRide is how
// many make any group take them along.
const (
	activityLinger = 250 * time.Millisecond
	activityRide   = 256
)

// activityRowOverhead approximates a row's bytes besides its text.
const activityRowOverhead = 96

type activityBuf struct {
	mu      sync.Mutex
	rows    []agent.ActivityRow
	dropped int64
	max     int   // activityBuffer unless a test sets it
	ride    int   // activityRide unless a test sets it
	lastID  int64 // the last ID given: rows have theirs before they are written
}

func (b *activityBuf) limit() int { return cmp.Or(b.max, activityBuffer) }

// RecordActivity queues row for the next commit and returns its ID; false
// when the buffer is full and the row was dropped (and counted).
func (db *DB) RecordActivity(row agent.ActivityRow) (int64, bool) {
	b := &db.activity
	b.mu.Lock()
	if len(b.rows) >= b.limit() {
		b.dropped++
		b.mu.Unlock()
		return 0, false
	}
	b.lastID++
	row.ID = b.lastID
	b.rows = append(b.rows, row)
	first := len(b.rows) == 1
	b.mu.Unlock()
	if first {
		select {
		case db.activityDue <- struct{}{}:
		default:
		}
	}
	return row.ID, true
}

// takeActivity empties the buffer, with a row counting the drops.
func (db *DB) takeActivity() []agent.ActivityRow {
	b := &db.activity
	b.mu.Lock()
	defer b.mu.Unlock()
	rows := b.rows
	if b.dropped > 0 {
		b.lastID++
		rows = append(rows, agent.ActivityRow{ID: b.lastID, Time: time.Now().UTC(), Outcome: agent.OutcomeDropped,
			Text: fmt.Sprintf("%d rows were dropped: the log could not keep up", b.dropped)})
		b.dropped = 0
	}
	b.rows = nil
	return rows
}

// requeueActivity puts back rows whose commit failed, ahead of newer ones,
// within the bound.
func (db *DB) requeueActivity(rows []agent.ActivityRow) {
	if len(rows) == 0 {
		return
	}
	b := &db.activity
	b.mu.Lock()
	defer b.mu.Unlock()
	all := append(rows, b.rows...)
	if over := len(all) - b.limit(); over > 0 {
		b.dropped += int64(over)
		all = all[over:]
	}
	b.rows = all
}

// activityRides reports whether a group commits the buffered rows: it
// carries several writes (under load), a job asks for them, or enough
// wait.
func (db *DB) activityRides(group []*writeJob) bool {
	if len(group) > 1 || slices.ContainsFunc(group, func(j *writeJob) bool { return j.activity }) {
		return true
	}
	b := &db.activity
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.rows) >= cmp.Or(b.ride, activityRide)
}

func (db *DB) activityPending() bool {
	b := &db.activity
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.rows) > 0 || b.dropped > 0
}

// activityColumns are the columns a row fills; insertActivityRows(n) is
// the insert of n rows. Rows go in chunks of activityChunk, one statement
// each, and the rest one at a time: both statements, executed with
// arguments, run from the connection's statement cache, so a commit
// prepares nothing.
const (
	activityColumns = "id, at, client, era, method, agent, conversation, duration_us, outcome, reason, bytes_in, bytes_out, text, arguments, size"
	activityChunk   = 32
)

var (
	insertActivityRow   = insertActivityRows(1)
	insertActivityChunk = insertActivityRows(activityChunk)
)

func insertActivityRows(n int) string {
	row := "(" + strings.Repeat("?, ", strings.Count(activityColumns, ",")) + "?)"
	return "INSERT INTO activity (" + activityColumns + ") VALUES " + strings.Repeat(row+", ", n-1) + row
}

// activityArgs appends a row's values, in activityColumns' order.
func activityArgs(args []any, r agent.ActivityRow) []any {
	return append(args, r.ID, millis(r.Time), r.Client, r.Era, r.Method, r.Agent, r.Conversation,
		r.Duration.Microseconds(), string(r.Outcome), r.Reason, r.BytesIn, r.BytesOut, r.Text, r.Arguments, rowSize(r))
}

// writeActivity inserts the buffered rows in the group's transaction and
// returns those written, to put back if the commit fails. A statement that
// fails (SQLite undoes just that statement) drops its rows and the rest,
// counted, and never fails the group's writes.
func (db *DB) writeActivity(ctx context.Context, tx *sql.Tx) []agent.ActivityRow {
	rows := db.takeActivity()
	args := make([]any, 0, activityChunk*15)
	for done := 0; done < len(rows); {
		n, query := 1, insertActivityRow
		if len(rows)-done >= activityChunk {
			n, query = activityChunk, insertActivityChunk
		}
		args = args[:0]
		for _, r := range rows[done : done+n] {
			args = activityArgs(args, r)
		}
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			db.activity.mu.Lock()
			db.activity.dropped += int64(len(rows) - done)
			db.activity.mu.Unlock()
			return rows[:done]
		}
		done += n
	}
	return rows
}

func rowSize(r agent.ActivityRow) int64 {
	return int64(activityRowOverhead + len(r.Client) + len(r.Era) + len(r.Method) + len(r.Agent) +
		len(r.Conversation) + len(r.Outcome) + len(r.Reason) + len(r.Text) + len(r.Arguments))
}

// flushActivity commits the buffered rows, if any, on their own (on the
// writer's goroutine).
func (db *DB) flushActivity() {
	if db.activityPending() {
		db.commitGroup([]*writeJob{activityJob(context.Background())})
	}
}

// activityJob is a write that writes nothing but commits the buffered
// rows.
func activityJob(ctx context.Context) *writeJob {
	return &writeJob{ctx: ctx, fn: noWrite, activity: true, done: make(chan error, 1)}
}

// noWrite is a write that writes nothing but commits what rides with it.
func noWrite(context.Context, *sql.Tx) error { return nil }

// settleActivity commits the rows still buffered, and waits for those a
// group of writes took along, so that a read sees every recorded row.
func (db *DB) settleActivity(ctx context.Context) error {
	settle := db.caughtUp
	if db.activityPending() {
		settle = func(ctx context.Context) error { return db.enqueue(activityJob(ctx))() }
	}
	if err := settle(ctx); err != nil {
		return fmt.Errorf("write the buffered activity: %w", err)
	}
	return nil
}

// Activity lists the log, the rows still buffered committed first.
func (db *DB) Activity(ctx context.Context, f agent.ActivityFilter) ([]agent.ActivityRow, error) {
	if err := db.settleActivity(ctx); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	if f.Client != "" {
		where, args = append(where, "client = ?"), append(args, f.Client)
	}
	if f.Agent != "" {
		where, args = append(where, "agent = ?"), append(args, f.Agent)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, millis(f.Since))
	}
	q := `SELECT id, at, client, era, method, agent, conversation, duration_us, outcome, reason, bytes_in, bytes_out, text, arguments FROM activity`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit)
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read activity: %w", err)
	}
	defer rows.Close()
	var out []agent.ActivityRow
	for rows.Next() {
		var r agent.ActivityRow
		var at, us int64
		var outcome string
		if err := rows.Scan(&r.ID, &at, &r.Client, &r.Era, &r.Method, &r.Agent, &r.Conversation, &us, &outcome,
			&r.Reason, &r.BytesIn, &r.BytesOut, &r.Text, &r.Arguments); err != nil {
			return nil, fmt.Errorf("read activity: %w", err)
		}
		r.Time, r.Duration, r.Outcome = fromMillis(at), time.Duration(us)*time.Microsecond, agent.ActivityOutcome(outcome)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read activity: %w", err)
	}
	return out, nil
}

// PruneActivity deletes rows older than before, then the oldest until the
// rest take at most maxBytes (0: no bound by size).
func (db *DB) PruneActivity(ctx context.Context, before time.Time, maxBytes int64) (int64, error) {
	var n int64
	// The buffered rows are written first, so that they count.
	j := activityJob(ctx)
	j.fn = func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM activity WHERE at < ?", millis(before))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if maxBytes <= 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, `DELETE FROM activity WHERE id <= (
			SELECT id FROM (SELECT id, SUM(size) OVER (ORDER BY id DESC) AS total FROM activity)
			WHERE total > ? ORDER BY id DESC LIMIT 1)`, maxBytes)
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n += m
		return nil
	}
	err := db.enqueue(j)()
	if err != nil {
		return 0, fmt.Errorf("prune activity: %w", busy(err))
	}
	return n, nil
}

// ClientCalls counts each client's tool calls since a time, by client ID.
func (db *DB) ClientCalls(ctx context.Context, since time.Time) (map[string]int, error) {
	if err := db.settleActivity(ctx); err != nil {
		return nil, err
	}
	rows, err := db.db.QueryContext(ctx, `SELECT client, COUNT(*) FROM activity
		WHERE client != '' AND at >= ? AND method = 'tools/call' GROUP BY client`, millis(since))
	if err != nil {
		return nil, fmt.Errorf("count calls: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var client string
		var n int
		if err := rows.Scan(&client, &n); err != nil {
			return nil, fmt.Errorf("count calls: %w", err)
		}
		out[client] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count calls: %w", err)
	}
	return out, nil
}
