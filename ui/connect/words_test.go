package connect

import (
	"errors"
	"fmt"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestDescribe: the few words each outcome of connect, disconnect and
// status is reported with, and whether it counts as a success.
func TestDescribe(t *testing.T) {
	connected := func(h Health, tools int) Report {
		return Report{State: State{Condition: Connected}, Check: Check{Health: h, Tools: tools}}
	}
	wrote := connected(Verified, 1)
	wrote.Action = Wrote
	for _, c := range []struct {
		name   string
		r      Report
		err    error
		want   string
		wantOK bool
	}{
		{"does not parse", Report{}, fmt.Errorf("read: %w", &ParseError{Path: "/x", Format: "JSON", Err: errors.New("bad")}), "refused: the file does not parse, left untouched", false},
		{"too deep", Report{}, &LimitError{Path: "/x", Limit: 64, Line: 3}, "refused: the file is nested too deeply, left untouched", false},
		{"too large", Report{}, &LimitError{Path: "/x", Size: 1 << 30, Limit: 1 << 20}, "refused: the file is too large, left untouched", false},
		{"link out", Report{}, &UnsafePathError{Problem: LeavesProject}, "refused: a link out of the project, left untouched", false},
		{"dangling", Report{}, &UnsafePathError{Problem: DanglingLink}, "refused: a link to nothing, left untouched", false},
		{"not regular", Report{}, &UnsafePathError{Problem: NotRegular}, "refused: not a regular file, left untouched", false},
		{"other error", Report{}, errors.New("boom"), "failed", false},
		{"dry run", Report{Action: WouldWrite}, nil, "would connect (dry run)", true},
		{"removed", Report{Action: Removed}, nil, "disconnected, token revoked", true},
		{"not installed", Report{State: State{Condition: NotInstalled}}, nil, "not installed", true},
		{"not connected", Report{State: State{Condition: NotConnected}}, nil, "not connected", true},
		{"verified", connected(Verified, 3), nil, "connected, verified (3 tools)", true},
		{"written", wrote, nil, "written, verified (1 tool)", true},
		{"not running", connected(NotRunning, 0), nil, "connected, not verified: Deskhand is not running", true},
		{"token refused", connected(TokenRefused, 0), nil, "connected, token refused", false},
		{"stale", connected(Stale, 0), nil, "connected, stale", false},
	} {
		got, ok := Describe(c.r, c.err)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: Describe = %q, %v; want %q, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

// TestExplainAndFileOf: errors are worded for the person (a user error's
// message alone, connect's errors without their package prefix), and a
// linked file names where it leads.
func TestExplainAndFileOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{agent.Userf(errors.New("detail"), "no such client"), "no such client"},
		{errors.New("connect: cannot write /x: read-only file system"), "cannot write /x: read-only file system"},
	} {
		if got := Explain(c.err); got != c.want {
			t.Errorf("Explain(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if got := FileOf(Report{State: State{Path: "/a", Real: "/b"}}); got != "/a -> /b" {
		t.Errorf("FileOf a link = %q", got)
	}
	if got := FileOf(Report{Result: Result{Path: "/a"}}); got != "/a" {
		t.Errorf("FileOf a file = %q", got)
	}
}
