package connect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockSuffix names the lock file kept beside a configuration file. It is
// never removed: removing a lock file while another process waits on it
// would let two processes hold "the" lock at once.
const lockSuffix = ".deskhand-lock"

// defaultLockWait is how long an edit waits for another Deskhand editing
// the same file: a Manager holds the lock through two verifications.
const defaultLockWait = 2 * time.Minute

// LockError reports a configuration file that another Deskhand kept
// locked for longer than the edit would wait; nothing was written.
type LockError struct {
	Path   string        // the configuration file
	Lock   string        // its lock file
	Waited time.Duration // how long the edit waited
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another Deskhand has been editing %s for more than %s (it holds the lock %s): let it finish and run again",
		e.Path, e.Waited.Round(time.Second), e.Lock)
}

func (e Env) lockWait() time.Duration {
	if e.LockWait <= 0 {
		return defaultLockWait
	}
	return e.LockWait
}

// lock takes the lock of client's configuration file for one
// read-modify-write, so that Deskhands editing it at once (two 'deskhand
// connect' runs, the CLI and the desktop) queue instead of overwriting
// each other. With create unset, a file whose folder does not exist is not
// locked (there is nothing to edit) and no folder is created.
func lock(ctx context.Context, c Client, env Env, create bool) (unlock func(), err error) {
	p, err := Path(c, env)
	if err != nil {
		return nil, err
	}
	real, err := resolve(p, env)
	if err != nil {
		return nil, err
	}
	// Refuse what will be refused anyway before leaving a lock file
	// (and a folder) where a link leads.
	if _, err := inspect(p, real); err != nil {
		return nil, err
	}
	if !create && !isDir(filepath.Dir(real)) {
		return func() {}, nil
	}
	return lockFile(ctx, p, real, env.lockWait())
}

// lockFile takes an advisory lock (flock, LockFileEx) on a lock file
// beside real, the real path of the configuration file p, creating its
// folder. It waits up to wait for another holder; the lock is released by
// unlock, or by the OS when the process ends.
func lockFile(ctx context.Context, p, real string, wait time.Duration) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	lp := real + lockSuffix
	if fi, err := os.Lstat(lp); err == nil && !fi.Mode().IsRegular() {
		return nil, &UnsafePathError{Path: lp, Real: lp, Problem: NotRegular, Kind: kind(fi.Mode())}
	}
	f, err := openLockFile(lp)
	if err != nil {
		return nil, fmt.Errorf("connect: open the lock file: %w", err)
	}
	start := time.Now()
	delay := 5 * time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("connect: lock %s: %w", lp, err)
		}
		if ok {
			return func() {
				_ = unlockFile(f)
				f.Close()
			}, nil
		}
		left := wait - time.Since(start)
		if left <= 0 {
			f.Close()
			return nil, &LockError{Path: p, Lock: lp, Waited: wait}
		}
		t := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("connect: waiting for the lock %s: %w", lp, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}
