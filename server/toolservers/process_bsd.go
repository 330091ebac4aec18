//go:build unix && !linux

package toolservers

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in a process group of its own, which
// stop kills whole. Only Linux can have a child killed when Deskhand dies.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
