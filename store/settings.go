package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/deskhand/deskhand/server/agent"
)

// Setting returns the value of a setting; agent.ErrNotFound if unset.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.db.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("setting %s: %w", key, agent.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, nil
}

// SetSetting stores a setting, replacing its previous value.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	_, err := db.exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("set setting %s: %w", key, err)
	}
	return nil
}

// Settings reads the keys, "" for each one unset; its error is for a
// person and names the key it could not read.
func (db *DB) Settings(ctx context.Context, keys ...string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for _, key := range keys {
		v, err := db.Setting(ctx, key)
		if err != nil && !errors.Is(err, agent.ErrNotFound) {
			return nil, agent.Userf(err, "cannot read the setting %s from the database in %s", key, filepath.Dir(db.path))
		}
		out[key] = v
	}
	return out, nil
}
