package store

import (
	"context"
	"database/sql"

	"github.com/deskhand/deskhand/server/agent"
)

// CreateConversation inserts a conversation without a turn, for tests
// that need one empty; Deskhand writes a conversation with its first turn
// (BeginTurn).
func (db *DB) CreateConversation(ctx context.Context, c agent.Conversation) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return insertConversation(ctx, tx, c) })
}
