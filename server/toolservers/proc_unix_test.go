//go:build unix

package toolservers

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// alive reports whether pid is a live process (not a zombie), from the
// process table.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	if runtime.GOOS != "linux" {
		return syscall.Kill(pid, 0) == nil
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) STATE ...
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// killPID kills pid as a crash would.
func killPID(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// killLater kills pid at the end of the test, should a failing test leave
// it running.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}
