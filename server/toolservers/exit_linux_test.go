package toolservers

import (
	"testing"

	"golang.org/x/sys/unix"
)

// watchExit returns a function that waits (at most waitLimit) for pid to
// exit and reports whether it did: a pidfd becomes readable when its
// process ends, child of ours or not.
func watchExit(t *testing.T, pid int) func() bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return func() bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(waitLimit.Milliseconds()))
		return err == nil && n == 1
	}
}
