//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/server/control"
)

// TestSocketIsPrivate: on Unix the socket is deskhand.sock in the data
// folder, where the command line dials it, and only its owner may open it.
func TestSocketIsPrivate(t *testing.T) {
	path := socketPath(t)
	if want := filepath.Join(filepath.Dir(path), "deskhand.sock"); path != want {
		t.Fatalf("socket path %s, want %s", path, want)
	}
	listen(t, path, newCore(t))
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != os.ModeSocket || info.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with mode 0600", info.Mode())
	}
	if _, err := control.Dial(path); err != nil {
		t.Error(err)
	}
}
