package connect

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// What the command line and the Connect tab say of a client's entry: the
// file, the outcome in a few words, an error for the person.

// FileOf names a report's configuration file, and the file it leads to
// when it is a link.
func FileOf(r Report) string {
	p := cmp.Or(r.State.Path, r.Result.Path)
	if real := cmp.Or(r.State.Real, r.Result.Real); real != "" {
		return p + " -> " + real
	}
	return p
}

// Describe says in a few words what a report means, and whether it is a
// success.
func Describe(r Report, err error) (string, bool) {
	if err != nil {
		var perr *ParseError
		if errors.As(err, &perr) {
			return "refused: the file does not parse, left untouched", false
		}
		var lerr *LimitError
		if errors.As(err, &lerr) {
			if lerr.TooDeep() {
				return "refused: the file is nested too deeply, left untouched", false
			}
			return "refused: the file is too large, left untouched", false
		}
		var uerr *UnsafePathError
		if errors.As(err, &uerr) {
			switch uerr.Problem {
			case LeavesProject:
				return "refused: a link out of the project, left untouched", false
			case DanglingLink:
				return "refused: a link to nothing, left untouched", false
			}
			return "refused: not a regular file, left untouched", false
		}
		return "failed", false
	}
	switch r.Action {
	case WouldWrite:
		return "would connect (dry run)", true
	case Removed:
		return "disconnected, token revoked", true
	}
	switch r.State.Condition {
	case NotInstalled:
		return "not installed", true
	case NotConnected:
		return "not connected", true
	}
	verb := "connected"
	if r.Action == Wrote {
		verb = "written"
	}
	switch r.Check.Health {
	case Verified:
		tools := "tools"
		if r.Check.Tools == 1 {
			tools = "tool"
		}
		return fmt.Sprintf("%s, verified (%d %s)", verb, r.Check.Tools, tools), true
	case NotRunning:
		// Written (or left as it was), but not provable until the app runs.
		return verb + ", not verified: Deskhand is not running", true
	case AwaitsApproval:
		// Working, once the person says yes in the client.
		return verb + ", verified, " + r.Check.Health.String(), true
	}
	return verb + ", " + r.Check.Health.String(), false
}

// Explain words an error for the person: the connect package's errors
// (a file that does not parse, a folder that cannot be written) already
// are; the core's say only what a person should see.
func Explain(err error) string {
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return agent.UserMessage(err)
	}
	return strings.TrimPrefix(err.Error(), "connect: ")
}
