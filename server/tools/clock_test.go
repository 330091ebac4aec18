package tools_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

func TestCurrentTime(t *testing.T) {
	summer := time.Date(2024, time.July, 1, 12, 0, 0, 0, time.UTC) // a Monday
	winter := time.Date(2024, time.January, 15, 23, 30, 5, 999, time.UTC)
	tests := []struct {
		name    string
		now     time.Time
		args    string
		want    string
		wantErr []string
	}{
		{name: "UTC", now: summer, args: `{"timezone": "UTC"}`, want: "2024-07-01T12:00:00Z (Monday) in UTC (UTC)"},
		{name: "Paris in summer", now: summer, args: `{"timezone": "Europe/Paris"}`, want: "2024-07-01T14:00:00+02:00 (Monday) in Europe/Paris (CEST)"},
		{name: "Paris in winter", now: winter, args: `{"timezone": "Europe/Paris"}`, want: "2024-01-16T00:30:05+01:00 (Tuesday) in Europe/Paris (CET)"},
		{name: "New York", now: summer, args: `{"timezone": "America/New_York"}`, want: "2024-07-01T08:00:00-04:00 (Monday) in America/New_York (EDT)"},
		{name: "the next day", now: summer, args: `{"timezone": "Pacific/Kiritimati"}`, want: "2024-07-02T02:00:00+14:00 (Tuesday) in Pacific/Kiritimati (+14)"},
		{name: "half hour zone", now: summer, args: `{"timezone": "Asia/Kolkata"}`, want: "2024-07-01T17:30:00+05:30 (Monday) in Asia/Kolkata (IST)"},
		{name: "unknown zone", now: summer, args: `{"timezone": "Mars/Olympus_Mons"}`, wantErr: []string{`unknown time zone "Mars/Olympus_Mons"`, "IANA"}},
		{name: "abbreviation", now: summer, args: `{"timezone": "CEST"}`, wantErr: []string{`unknown time zone "CEST"`}},
		{name: "path", now: summer, args: `{"timezone": "../../../etc/passwd"}`, wantErr: []string{"unknown time zone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			clock := tool(t, tools.NameCurrentTime, tools.Options{Now: func() time.Time { return now }})
			got, err := call(t, clock, agent.Agent{}, tt.args)
			if tt.wantErr != nil {
				wantUserError(t, err, tt.wantErr...)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCurrentTimeLocal(t *testing.T) {
	now := time.Date(2024, time.July, 1, 12, 0, 0, 0, time.UTC)
	clock := tool(t, tools.NameCurrentTime, tools.Options{Now: func() time.Time { return now }})
	for _, args := range []string{``, `null`, `{}`, `{"timezone": ""}`} {
		got, err := call(t, clock, agent.Agent{}, args)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		stamp, rest, _ := strings.Cut(got, " ")
		parsed, err := time.Parse(time.RFC3339, stamp)
		if err != nil || !parsed.Equal(now) {
			t.Errorf("%s: %q is not the time %v: %v", args, stamp, now, err)
		}
		wantRest := "(" + now.In(time.Local).Weekday().String() + ") in the computer's local time zone"
		if !strings.HasPrefix(rest, wantRest) {
			t.Errorf("%s: got %q, want %q…", args, rest, wantRest)
		}
	}
	// The default clock is the real one.
	got, err := call(t, tool(t, tools.NameCurrentTime, tools.Options{}), agent.Agent{}, `{"timezone": "UTC"}`)
	stamp, _, _ := strings.Cut(got, " ")
	parsed, perr := time.Parse(time.RFC3339, stamp)
	if err != nil || perr != nil || time.Since(parsed).Abs() > time.Minute {
		t.Errorf("default clock: %q, %v, %v", got, err, perr)
	}
}
