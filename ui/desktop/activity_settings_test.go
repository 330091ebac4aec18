package desktop

import (
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

func TestLastSeen(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		used time.Time
		want string
	}{
		{time.Time{}, "never used"},
		{now.Add(-30 * time.Second), "last seen just now"},
		{now.Add(-time.Minute), "last seen 1 minute ago"},
		{now.Add(-5*time.Minute - 59*time.Second), "last seen 5 minutes ago"},
		{now.Add(-90 * time.Minute), "last seen 1 hour ago"},
		{now.Add(-23 * time.Hour), "last seen 23 hours ago"},
		{now.Add(-30 * time.Hour), "last seen yesterday"},
		{now.Add(-72 * time.Hour), "last seen 3 days ago"},
	} {
		if got := lastSeen(tc.used, now); got != tc.want {
			t.Errorf("%v before: %q, want %q", now.Sub(tc.used), got, tc.want)
		}
	}
	for n, want := range map[int]string{0: "no calls today", 1: "1 call today", 3: "3 calls today"} {
		if got := callsToday(n); got != want {
			t.Errorf("callsToday(%d) = %q, want %q", n, got, want)
		}
	}
	c := agent.Client{Name: "cursor", CreatedAt: time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local), LastUsedAt: now.Add(-5 * time.Minute)}
	if got := clientLabel(c, 3, now); got != "created Jan 2 2026 · last seen 5 minutes ago · 3 calls today" {
		t.Errorf("label %q", got)
	}
	if got := startOfDay(time.Date(2026, 12, 2, 0, 30, 0, 0, time.Local)); !got.Equal(time.Date(2026, 12, 2, 0, 0, 0, 0, time.Local)) {
		t.Errorf("start of day %v", got)
	}
}

// TestSettingsShowsCallsToday: each client's row says when it was last
// seen and how many tools it called today, read again when the clients
// change and when the Settings tab is shown.
func TestSettingsShowsCallsToday(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.Local)
	core := &fakeSettings{clients: []agent.Client{
		{ID: "id-cursor", Name: "cursor", CreatedAt: now.Add(-48 * time.Hour), LastUsedAt: now.Add(-5 * time.Minute)},
		{ID: "id-claude", Name: "claude", CreatedAt: now.Add(-48 * time.Hour)},
	}, calls: map[string]int{"id-cursor": 3}}
	v, ui := settingsScreen(t, core)
	v.now = func() time.Time { return now }
	v.refresh()
	ui.settle()
	if got := texts(t, v.clientRows.Objects[0]); !strings.Contains(got, "cursor · sees all agents") || !strings.Contains(got, "last seen 5 minutes ago · 3 calls today") {
		t.Errorf("cursor's row: %q", got)
	}
	if got := texts(t, v.clientRows.Objects[1]); !strings.Contains(got, "never used · no calls today") {
		t.Errorf("claude's row: %q", got)
	}
	if want := time.Date(2026, 12, 2, 0, 0, 0, 0, time.Local); !core.callsSince.Equal(want) {
		t.Errorf("counted since %v, want %v", core.callsSince, want)
	}
	core.mu.Lock()
	core.calls["id-cursor"] = 4
	core.mu.Unlock()
	v.refreshClients() // the clients changed
	if got := texts(t, v.clientRows.Objects[0]); !strings.Contains(got, "3 calls today") {
		t.Errorf("before the count is read again: %q", got)
	}
	ui.settle()
	if got := texts(t, v.clientRows.Objects[0]); !strings.Contains(got, "4 calls today") {
		t.Errorf("after the clients changed: %q", got)
	}
}

// TestSettingsTabReadsCallsToday: showing the Settings tab reads the
// calls today again.
func TestSettingsTabReadsCallsToday(t *testing.T) {
	settings := &fakeSettings{clients: []agent.Client{{ID: "id-cursor", Name: "cursor"}}}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeSettings: settings}))
	a.refresh()
	ui.settle()
	if got := texts(t, a.settings.clientRows.Objects[0]); !strings.Contains(got, "no calls today") {
		t.Errorf("at start: %q", got)
	}
	settings.mu.Lock()
	settings.calls = map[string]int{"id-cursor": 1}
	settings.mu.Unlock()
	a.tabs.SelectIndex(tabSettings)
	ui.settle()
	if got := texts(t, a.settings.clientRows.Objects[0]); !strings.Contains(got, "1 call today") {
		t.Errorf("after showing Settings: %q", got)
	}
}
