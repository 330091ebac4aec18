package toolservers

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// setProcessGroup gives the child a console process group of its own.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// group is a job object holding the child, and the processes it starts
// from then on: killGroup ends them all, and the kernel kills them when
// Deskhand's handle closes, even if Deskhand is killed. Zero when the job
// could not be made (the child alone is then killed).
type group struct{ job windows.Handle }

func joinGroup(cmd *exec.Cmd) group {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return group{}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return group{}
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return group{}
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return group{}
	}
	return group{job: job}
}

// release closes the job, which kills what is left in it.
func (g group) release() {
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
	}
}

// terminateGroup kills the child: Windows has no SIGTERM.
func terminateGroup(cmd *exec.Cmd, g group) { killGroup(cmd, g) }

// killGroup kills the job's processes, or the child alone without one.
func killGroup(cmd *exec.Cmd, g group) {
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
	}
	_ = cmd.Process.Kill()
}

func exitWords(e *exec.ExitError) string { return fmt.Sprintf("exited with status %d", e.ExitCode()) }
