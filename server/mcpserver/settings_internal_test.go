package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// failingSettings fails to read the keys in bad.
type failingSettings struct{ bad []string }

func (s failingSettings) Get(_ context.Context, key, def string) (string, error) {
	if slices.Contains(s.bad, key) {
		return "", errors.New("disk I/O error")
	}
	return def, nil
}

// TestSettingReadErrorsAreReported: a server setting that cannot be read
// is logged with its key, and its default used (they used to be dropped
// without a word).
func TestSettingReadErrorsAreReported(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	info := InfoFrom(t.Context(), failingSettings{bad: []string{"server.title", "server.website"}}, "test", log)
	if info.Title != "Deskhand" || info.Name != "deskhand" {
		t.Errorf("defaults not used: %+v", info)
	}
	if v := readSetting(t.Context(), failingSettings{bad: []string{"server.allowed_hosts"}}, log, "server.allowed_hosts", ""); v != "" {
		t.Errorf("allowed_hosts = %q", v)
	}
	for _, key := range []string{"server.title", "server.website", "server.allowed_hosts"} {
		if !strings.Contains(logs.String(), "key="+key) {
			t.Errorf("no warning naming %s:\n%s", key, logs.String())
		}
	}
	if strings.Contains(logs.String(), "key=server.name") {
		t.Errorf("a readable setting was reported:\n%s", logs.String())
	}
}

// TestStateKeys: DESKHAND_STATE_KEYS holds hex keys of 32 bytes or more,
// comma-separated; anything else is refused with what to do.
func TestStateKeys(t *testing.T) {
	good := strings.Repeat("ab", 32)
	if keys, err := parseStateKeys(good + ", " + good); err != nil || len(keys) != 2 {
		t.Errorf("two good keys: %d, %v", len(keys), err)
	}
	if keys, err := parseStateKeys(""); err != nil || keys != nil {
		t.Errorf("none: %v, %v", keys, err)
	}
	for _, bad := range []string{"zz", strings.Repeat("ab", 16)} {
		if _, err := parseStateKeys(bad); err == nil || !strings.Contains(err.Error(), "openssl rand -hex 32") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
