package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/connect"
)

// TestDescribe: the few words each outcome of connect, disconnect and
// status is reported with, and whether it counts as a success.
func TestDescribe(t *testing.T) {
	connected := func(h connect.Health, tools int) connect.Report {
		return connect.Report{State: connect.State{Condition: connect.Connected}, Check: connect.Check{Health: h, Tools: tools}}
	}
	wrote := connected(connect.Verified, 1)
	wrote.Action = connect.Wrote
	for _, c := range []struct {
		name   string
		r      connect.Report
		err    error
		want   string
		wantOK bool
	}{
		{"does not parse", connect.Report{}, fmt.Errorf("read: %w", &connect.ParseError{Path: "/x", Format: "JSON", Err: errors.New("bad")}), "refused: the file does not parse, left untouched", false},
		{"too deep", connect.Report{}, &connect.LimitError{Path: "/x", Limit: 64, Line: 3}, "refused: the file is nested too deeply, left untouched", false},
		{"too large", connect.Report{}, &connect.LimitError{Path: "/x", Size: 1 << 30, Limit: 1 << 20}, "refused: the file is too large, left untouched", false},
		{"link out", connect.Report{}, &connect.UnsafePathError{Problem: connect.LeavesProject}, "refused: a link out of the project, left untouched", false},
		{"dangling", connect.Report{}, &connect.UnsafePathError{Problem: connect.DanglingLink}, "refused: a link to nothing, left untouched", false},
		{"not regular", connect.Report{}, &connect.UnsafePathError{Problem: connect.NotRegular}, "refused: not a regular file, left untouched", false},
		{"other error", connect.Report{}, errors.New("boom"), "failed", false},
		{"dry run", connect.Report{Action: connect.WouldWrite}, nil, "would connect (dry run)", true},
		{"removed", connect.Report{Action: connect.Removed}, nil, "disconnected, token revoked", true},
		{"not installed", connect.Report{State: connect.State{Condition: connect.NotInstalled}}, nil, "not installed", true},
		{"not connected", connect.Report{State: connect.State{Condition: connect.NotConnected}}, nil, "not connected", true},
		{"verified", connected(connect.Verified, 3), nil, "connected, verified (3 tools)", true},
		{"written", wrote, nil, "written, verified (1 tool)", true},
		{"not running", connected(connect.NotRunning, 0), nil, "connected, not verified: Deskhand is not running", true},
		{"token refused", connected(connect.TokenRefused, 0), nil, "connected, token refused", false},
		{"stale", connected(connect.Stale, 0), nil, "connected, stale", false},
	} {
		got, ok := Describe(c.r, c.err)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: Describe = %q, %v; want %q, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

// TestProblemAndFileOf: errors are worded for the person (a user error's
// message alone, connect's errors without their package prefix), and a
// linked file names where it leads.
func TestProblemAndFileOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{agent.Userf(errors.New("detail"), "no such client"), "no such client"},
		{errors.New("connect: cannot write /x: read-only file system"), "cannot write /x: read-only file system"},
	} {
		if got := Problem(c.err); got != c.want {
			t.Errorf("Problem(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if got := FileOf(connect.Report{State: connect.State{Path: "/a", Real: "/b"}}); got != "/a -> /b" {
		t.Errorf("FileOf a link = %q", got)
	}
	if got := FileOf(connect.Report{Result: connect.Result{Path: "/a"}}); got != "/a" {
		t.Errorf("FileOf a file = %q", got)
	}
}
