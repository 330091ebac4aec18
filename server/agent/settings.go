package agent

import (
	"context"
	"errors"
	"sync/atomic"
)

// Settings are the person's stored settings, and whether serving is
// paused.
type Settings struct {
	store  SettingStore
	paused atomic.Bool
	// pauseChanged tells the agents' subscribers: a pause changes what is
	// served.
	pauseChanged func()
}

// Get returns a stored setting, or def when it is unset.
func (st *Settings) Get(ctx context.Context, key, def string) (string, error) {
	v, err := st.store.Setting(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	return v, err
}

// Set stores a setting.
func (st *Settings) Set(ctx context.Context, key, value string) error {
	return st.store.SetSetting(ctx, key, value)
}

// SetPaused pauses serving (every agent leaves the tool list; turns already
// running finish) or resumes it.
func (st *Settings) SetPaused(paused bool) {
	if st.paused.Swap(paused) != paused {
		st.pauseChanged()
	}
}

// PausedMessage is what a client calling an agent is told while serving
// is paused.
const PausedMessage = "Deskhand is paused: the person running it paused serving, so no agent runs until they resume it (in Deskhand's window or tray menu). Try again later."

// Paused reports whether serving is paused.
func (st *Settings) Paused() bool { return st.paused.Load() }

// SettingLastURL keeps the endpoint the app served at last, for
// 'deskhand connect' while the app is stopped.
const SettingLastURL = "server.last_url"

// SettingStore keeps key/value settings.
type SettingStore interface {
	Setting(ctx context.Context, key string) (string, error) // ErrNotFound if unset
	SetSetting(ctx context.Context, key, value string) error
}
