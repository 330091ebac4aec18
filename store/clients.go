package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Clients returns every client, revoked ones included, oldest first.
func (db *DB) Clients(ctx context.Context) ([]agent.Client, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id, name, token_hash, created_at, last_used_at, revoked_at, agents_limited
		FROM clients ORDER BY created_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	defer rows.Close()
	var out []agent.Client
	for rows.Next() {
		var (
			c             agent.Client
			created       int64
			used, revoked sql.NullInt64
		)
		if err := rows.Scan(&c.ID, &c.Name, &c.TokenHash, &created, &used, &revoked, &c.Agents.Only); err != nil {
			return nil, fmt.Errorf("read client: %w", err)
		}
		if len(c.TokenHash) == 0 {
			c.TokenHash = nil
		}
		c.CreatedAt, c.LastUsedAt, c.RevokedAt = fromMillis(created), fromNullMillis(used), fromNullMillis(revoked)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	if err := db.readClientAgents(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// PutClient inserts the client or replaces every field of the one with
// its ID. Two active (unrevoked) clients may not share a name.
func (db *DB) PutClient(ctx context.Context, c agent.Client) error {
	hash := c.TokenHash
	if hash == nil {
		hash = []byte{} // go-sqlite3 binds a nil slice as NULL
	}
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO clients (id, name, token_hash, created_at, last_used_at, revoked_at, agents_limited)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, token_hash = excluded.token_hash, created_at = excluded.created_at,
			last_used_at = excluded.last_used_at, revoked_at = excluded.revoked_at, agents_limited = excluded.agents_limited`,
			c.ID, c.Name, hash, millis(c.CreatedAt), nullMillis(c.LastUsedAt), nullMillis(c.RevokedAt), c.Agents.Only); err != nil {
			return err
		}
		return putClientAgents(ctx, tx, c)
	})
	if err = busy(err); err != nil {
		return fmt.Errorf("put client %s: %w", c.Name, err)
	}
	return nil
}

// TouchClient records the client's last use; agent.ErrNotFound if there
// is no such client.
func (db *DB) TouchClient(ctx context.Context, id string, at time.Time) error {
	res, err := db.exec(ctx, "UPDATE clients SET last_used_at = ? WHERE id = ?", millis(at), id)
	if err != nil {
		return fmt.Errorf("touch client %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("touch client %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("touch client %s: %w", id, agent.ErrNotFound)
	}
	return nil
}
