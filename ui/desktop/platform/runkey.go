package platform

import (
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// runKeyPath is the per-user Run key under HKEY_CURRENT_USER: Windows
// runs each of its values' commands when the user logs in.
const runKeyPath = `Software\Microsoft\Windows\CurrentVersion\Run`

// runValueName is Deskhand's value in the Run key.
const runValueName = "Deskhand"

// runValue is the Run key's command that runs exe: the path in double
// quotes, so that a path with spaces is one program, not a program and
// its arguments. Windows paths cannot contain a double quote.
func runValue(exe string) string {
	return `"` + exe + `"`
}

// stringValues is the little of a registry key the Run key's logic
// needs, so that the logic is tested with a map on any OS.
type stringValues interface {
	// get returns the value's string, found=false when there is none.
	get(name string) (value string, found bool, err error)
	set(name, value string) error
	// remove deletes the value; a missing one is no error.
	remove(name string) error
}

// runKey is one value of the Run key.
type runKey struct {
	values stringValues
	name   string
}

// enabled tells whether the value runs exe (Windows paths ignore case).
func (r runKey) enabled(exe string) (bool, error) {
	v, found, err := r.values.get(r.name)
	if err != nil {
		return false, agent.Userf(err, `cannot read %s in HKEY_CURRENT_USER\%s`, r.name, runKeyPath)
	}
	return found && strings.EqualFold(v, runValue(exe)), nil
}

// set writes the value that runs exe, or deletes it.
func (r runKey) set(on bool, exe string) error {
	if !on {
		if err := r.values.remove(r.name); err != nil {
			return agent.Userf(err, `cannot remove %s from HKEY_CURRENT_USER\%s`, r.name, runKeyPath)
		}
		return nil
	}
	if err := r.values.set(r.name, runValue(exe)); err != nil {
		return agent.Userf(err, `cannot write %s in HKEY_CURRENT_USER\%s`, r.name, runKeyPath)
	}
	return nil
}
