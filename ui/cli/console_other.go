//go:build !windows

package cli

// UseTerminal does nothing here: a program started from a terminal
// already has its standard handles.
func UseTerminal() {}
