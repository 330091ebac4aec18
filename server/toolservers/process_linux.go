package toolservers

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in a process group of its own, which
// stop kills whole, and has the kernel kill the child should Deskhand
// die, even by SIGKILL. (Pdeathsig follows the thread that started the
// child; Go ends a thread only when a goroutine locked to it exits, which
// Deskhand's never do around a start.)
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
