package agent

import (
	"context"
	"errors"
)

// Setting returns a stored setting, or def when it is unset.
func (c *Core) Setting(ctx context.Context, key, def string) (string, error) {
	v, err := c.history.Setting(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	return v, err
}

// SetSetting stores a setting.
func (c *Core) SetSetting(ctx context.Context, key, value string) error {
	return c.history.SetSetting(ctx, key, value)
}
