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
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeSettings: settings}).asCore())
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

func TestLogSettingsChecks(t *testing.T) {
	for text, ok := range map[string]bool{"": true, "30d": true, " 7d ": true, "720h": true, "90m": true, "0d": false, "-1h": false, "7 weeks": false, "30": false} {
		if (logAgeProblem(text) == "") != ok {
			t.Errorf("logAgeProblem(%q) = %q", text, logAgeProblem(text))
		}
	}
	for text, ok := range map[string]bool{"": true, "100": true, " 5 ": true, "0": false, "-3": false, "1.5": false, "lots": false} {
		if (logSizeProblem(text) == "") != ok {
			t.Errorf("logSizeProblem(%q) = %q", text, logSizeProblem(text))
		}
	}
	for _, c := range []struct{ stored, now, want string }{
		{"", "true", ""}, {"true", "true", ""}, {"false", "false", ""},
		{"false", "true", "In effect now: on (what you saved applies from the next start)."},
		{"", "false", "In effect now: off (what you saved applies from the next start)."},
	} {
		if got := effectNote(agent.SettingLogEnabled, c.stored, c.now, true, true); got != c.want {
			t.Errorf("stored %q, in effect %q: %q, want %q", c.stored, c.now, got, c.want)
		}
	}
}

// TestAdvancedLogSettings: Settings → Advanced shows the activity log's
// settings, refuses an age or a size it cannot read, saves them, and says
// when each applies.
func TestAdvancedLogSettings(t *testing.T) {
	core := &fakeSettings{settings: map[string]string{agent.SettingLogEnabled: "false", agent.SettingLogMaxAge: "7d"}}
	v, ui := settingsScreen(t, core)
	v.refresh()
	ui.settle()
	age, size := v.entries[agent.SettingLogMaxAge], v.entries[agent.SettingLogMaxMB]
	if v.logOn.Checked || age.Text != "7d" || size.Text != "" {
		t.Fatalf("read: log on %v, age %q, size %q", v.logOn.Checked, age.Text, size.Text)
	}
	if got := v.notes[agent.SettingLogEnabled].Text; got != "Applies at the next start." {
		t.Errorf("under the box: %q", got)
	}
	if got := v.notes[agent.SettingLogMaxAge].Text; got != logAgeNote {
		t.Errorf("under the age: %q", got)
	}
	if got := v.notes[agent.SettingLogMaxMB].Text; got != logSizeNote {
		t.Errorf("under the size: %q", got)
	}
	age.SetText("7 weeks")
	size.SetText("0")
	if got := v.notes[agent.SettingLogMaxAge].Text; !strings.HasPrefix(got, "✖ Write an age such as 30d") {
		t.Errorf("a bad age: %q", got)
	}
	v.save()
	ui.settle()
	if got := v.notes[agent.SettingLogMaxMB].Text; !strings.HasPrefix(got, "✖ Write a whole number of megabytes") || !strings.HasPrefix(v.advancedStatus.Text, "✖ Not saved") {
		t.Errorf("a bad size: %q; status %q", got, v.advancedStatus.Text)
	}
	if core.settings[agent.SettingLogMaxAge] != "7d" {
		t.Errorf("saved though wrong: %v", core.settings)
	}
	age.SetText("14d")
	size.SetText(" 50 ")
	v.logOn.SetChecked(true)
	v.save()
	ui.settle()
	core.mu.Lock()
	saved := []string{core.settings[agent.SettingLogEnabled], core.settings[agent.SettingLogMaxAge], core.settings[agent.SettingLogMaxMB]}
	core.mu.Unlock()
	if strings.Join(saved, " ") != "true 14d 50" || !strings.HasPrefix(v.advancedStatus.Text, "Saved.") {
		t.Errorf("saved %q; status %q", saved, v.advancedStatus.Text)
	}
	if got := v.notes[agent.SettingLogEnabled].Text; got != "In effect now: off (what you saved applies from the next start). Applies at the next start." {
		t.Errorf("under the box after saving: %q", got)
	}
	v.refresh() // read again: what this run started with stays in effect
	ui.settle()
	if got := v.notes[agent.SettingLogEnabled].Text; !strings.HasPrefix(got, "In effect now: off") || !v.logOn.Checked {
		t.Errorf("read again: %q, checked %v", got, v.logOn.Checked)
	}
}

// TestAdvancedTeamDepth: Advanced holds how deep teams may go, checks it,
// says it applies at once, and saves it.
func TestAdvancedTeamDepth(t *testing.T) {
	core := &fakeSettings{settings: map[string]string{}}
	v, ui := settingsScreen(t, core)
	v.refresh()
	ui.settle()
	depth := v.entries[agent.SettingTeamMaxDepth]
	if depth == nil || depth.Text != "" || v.notes[agent.SettingTeamMaxDepth].Text != teamDepthNote {
		t.Fatalf("the team depth field: %v, note %q", depth, v.notes[agent.SettingTeamMaxDepth].Text)
	}
	depth.SetText("0")
	if got := v.notes[agent.SettingTeamMaxDepth].Text; !strings.HasPrefix(got, "✖ Write a whole number of at least 1") {
		t.Errorf("a depth of 0: %q", got)
	}
	depth.SetText("2")
	v.save()
	ui.settle()
	core.mu.Lock()
	saved := core.settings[agent.SettingTeamMaxDepth]
	core.mu.Unlock()
	if saved != "2" {
		t.Errorf("saved %q", saved)
	}
}
