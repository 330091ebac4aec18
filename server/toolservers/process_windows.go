package toolservers

import (
	"fmt"
	"os/exec"
	"syscall"
)

// setProcessGroup gives the child a console process group of its own.
// Windows kills only the child itself (a job object would take its
// children too: not done yet).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// terminateGroup kills the child: Windows has no SIGTERM.
func terminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// killGroup kills the child.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func exitWords(e *exec.ExitError) string { return fmt.Sprintf("exited with status %d", e.ExitCode()) }
