//go:build !unix

package clientcheck_test

import "os/exec"

// ownGroup does nothing here: there is no process group to make.
func ownGroup(*exec.Cmd) {}

// killGroup kills the process itself.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return nil
	}
	return cmd.Process.Kill()
}
