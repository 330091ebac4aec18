package store

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/server/agent"
)

// Providers returns every provider, by name.
func (db *DB) Providers(ctx context.Context) ([]agent.Provider, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT name, kind, base_url, created_at, updated_at FROM providers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	defer rows.Close()
	var out []agent.Provider
	for rows.Next() {
		var (
			p                agent.Provider
			created, updated int64
		)
		if err := rows.Scan(&p.Name, &p.Kind, &p.BaseURL, &created, &updated); err != nil {
			return nil, fmt.Errorf("read provider: %w", err)
		}
		p.CreatedAt, p.UpdatedAt = fromMillis(created), fromMillis(updated)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}

// PutProvider inserts the provider or replaces the one of that name.
func (db *DB) PutProvider(ctx context.Context, p agent.Provider) error {
	_, err := db.exec(ctx, `INSERT INTO providers (name, kind, base_url, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, base_url = excluded.base_url, updated_at = excluded.updated_at`,
		p.Name, string(p.Kind), p.BaseURL, millis(p.CreatedAt), millis(p.UpdatedAt))
	if isConstraint(err, checkViolated) {
		return fmt.Errorf("put provider %s: kind %q is not known", p.Name, p.Kind)
	}
	if err != nil {
		return fmt.Errorf("put provider %s: %w", p.Name, busy(err))
	}
	return nil
}

// DeleteProvider removes the provider; agent.ErrNotFound if there is none.
func (db *DB) DeleteProvider(ctx context.Context, name string) error {
	res, err := db.exec(ctx, `DELETE FROM providers WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete provider %s: %w", name, busy(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("delete provider %s: %w", name, agent.ErrNotFound)
	}
	return nil
}
