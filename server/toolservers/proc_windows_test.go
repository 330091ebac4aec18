package toolservers

import "testing"

// The process-table and signal checks are Unix's; tests that need them
// call requireUnix first.

func alive(t *testing.T, pid int) bool {
	if pid != 0 {
		t.Skip("process table checks: Unix only")
	}
	return false
}

func killPID(t *testing.T, pid int) {
	if pid != 0 {
		t.Skip("signals: Unix only")
	}
}

func killLater(t *testing.T, pid int) {}
