//go:build unix

package toolservers

import (
	"fmt"
	"os/exec"
	"syscall"
)

// group is nothing more on Unix: the child leads a process group of its
// own (setProcessGroup), named by its pid.
type group struct{}

func joinGroup(*exec.Cmd) group { return group{} }

func (group) release() {}

// terminateGroup asks the child's whole process group to end.
func terminateGroup(cmd *exec.Cmd, _ group) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// killGroup kills the child's whole process group.
func killGroup(cmd *exec.Cmd, _ group) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

func exitWords(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%s)", ws.Signal(), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", e.ExitCode())
}
