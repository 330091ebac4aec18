package connect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestManagerConnectsTakeTurns: Connects of one client at once (here
// goroutines; processes in the root package's TestConcurrentConnects)
// take turns on the file, so none rotates the token away from under
// another: every one ends verified, and the file holds the last token.
func TestManagerConnectsTakeTurns(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	env.Now = nil // the test clock is not for several goroutines
	realFiles(t, env)
	m, _ := newManager(t, r, env)
	const n = 6
	type outcome struct {
		rep Report
		err error
	}
	done := make(chan outcome, 2*n)
	for i := range 2 * n {
		c := []Client{Cursor, Codex}[i%2]
		go func() {
			rep, err := m.Connect(t.Context(), c, ConnectOptions{Rotate: true})
			done <- outcome{rep, err}
		}()
	}
	for range 2 * n {
		o := <-done
		if o.err != nil || o.rep.Action != Wrote || o.rep.Check.Health != Verified {
			t.Errorf("%s: %+v, %v", o.rep.Client.ID, o.rep.Check, o.err)
		}
	}
	for _, c := range []Client{Cursor, Codex} {
		if rep, err := m.Status(t.Context(), c); err != nil || rep.Check.Health != Verified {
			t.Errorf("Status(%s) = %+v, %v", c.ID, rep.Check, err)
		}
		p, _ := Path(c, env)
		if b := backups(p); len(b) != keepBackups {
			t.Errorf("%d backups of %s, want %d", len(b), p, keepBackups)
		}
	}
}

// TestLockHeldTooLong: while another holds a file's lock, an edit waits
// for it, up to Env.LockWait, then refuses with an error that says what
// to do; the file is left as it was. A cancelled wait stops at once.
func TestLockHeldTooLong(t *testing.T) {
	env := testEnv(t)
	env.LockWait = 50 * time.Millisecond
	p, _ := Path(Cursor, env)
	writeFile(t, p, []byte(cursorFixture), 0o644)
	unlock, err := lockFile(t.Context(), p, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, errConnect := Connect(Cursor, env, entryFor(Cursor))
	_, errDisconnect := Disconnect(Cursor, env, "")
	for _, err := range []error{errConnect, errDisconnect} {
		var le *LockError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "let it finish and run again") {
			t.Errorf("error = %v, want a LockError", err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := &Manager{Env: env, URL: testURL}
	m.Env.LockWait = time.Hour
	if _, err := m.Connect(ctx, Cursor, ConnectOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context = %v", err)
	}
	if string(readFile(t, p)) != cursorFixture {
		t.Error("file changed")
	}
	unlock()
	if _, err := Connect(Cursor, env, entryFor(Cursor)); err != nil {
		t.Errorf("after the lock was released: %v", err)
	}
}

// TestLockFileNotALink: a link planted as the lock file is not followed.
func TestLockFileNotALink(t *testing.T) {
	env := testEnv(t)
	env.Project = t.TempDir()
	p, _ := Path(Cursor, env)
	outside := filepath.Join(t.TempDir(), "victim")
	symlink(t, outside, p+lockSuffix)
	_, err := Connect(Cursor, env, entryFor(Cursor))
	var ue *UnsafePathError
	if !errors.As(err, &ue) || ue.Problem != NotRegular {
		t.Errorf("error = %v, want the link refused", err)
	}
	if _, err := os.Lstat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("created through the link: %v", err)
	}
}
