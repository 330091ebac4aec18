//go:build !(unix && !aix) && !windows

package connect

import (
	"fmt"
	"os"
	"runtime"
)

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// tryLock fails: this OS has no advisory file lock Deskhand knows, and
// editing without one could lose another Deskhand's edit.
func tryLock(*os.File) (bool, error) {
	return false, fmt.Errorf("locking files is not supported on %s", runtime.GOOS)
}

func unlockFile(*os.File) error { return nil }
