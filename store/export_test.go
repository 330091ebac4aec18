package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// CreateConversation inserts a conversation without a turn, for tests
// that need one empty; Deskhand writes a conversation with its first turn
// (BeginTurn).
func (db *DB) CreateConversation(ctx context.Context, c agent.Conversation) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return insertConversation(ctx, tx, c) })
}

// SetActivityBuffer bounds the activity rows waiting for a commit.
func (db *DB) SetActivityBuffer(n int) {
	db.activity.mu.Lock()
	db.activity.max = n
	db.activity.mu.Unlock()
}

// SetActivityRide sets how many buffered activity rows make any group of
// writes take them along.
func (db *DB) SetActivityRide(n int) {
	db.activity.mu.Lock()
	db.activity.ride = n
	db.activity.mu.Unlock()
}

// ActivityPending reports whether activity rows wait for a commit.
func (db *DB) ActivityPending() bool { return db.activityPending() }

// SetLinger sets how long writes nobody waits for wait for one that is
// awaited; set before the first write.
func (db *DB) SetLinger(d time.Duration) { db.linger = d }

// Exec runs a statement as a write.
func (db *DB) Exec(ctx context.Context, query string) error {
	_, err := db.exec(ctx, query)
	return err
}

// Count runs a query that counts something.
func (db *DB) Count(ctx context.Context, query string) (n int, err error) {
	err = db.db.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}
