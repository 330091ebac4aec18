package agent

import (
	"context"
	"errors"
	"sync/atomic"
)

// Settings are the person's stored settings, and whether serving is
// paused.
type Settings struct {
	c      *Core
	paused atomic.Bool
}

// Get returns a stored setting, or def when it is unset.
func (st *Settings) Get(ctx context.Context, key, def string) (string, error) {
	c := st.c
	v, err := c.history.Setting(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	return v, err
}

// Set stores a setting.
func (st *Settings) Set(ctx context.Context, key, value string) error {
	c := st.c
	return c.history.SetSetting(ctx, key, value)
}
