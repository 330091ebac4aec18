//go:build unix

package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/store/atomicfile"
)

// TestWriteKeepsTheMode: a private file is private, a shared one is not
// narrowed.
func TestWriteKeepsTheMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0o600, 0o644} {
		path := filepath.Join(dir, mode.String())
		if err := atomicfile.Write(path, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("wrote with %v: got %v", mode, fi.Mode().Perm())
		}
	}
}

func TestMkdirPrivate(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "b")
	if err := atomicfile.MkdirPrivate(fresh); err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(root, "wide")
	if err := os.Mkdir(wide, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(wide, 0o755); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := atomicfile.MkdirPrivate(wide); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fresh, wide} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, want a folder with mode 0700", dir, fi.Mode())
		}
	}
	// Twice is fine.
	if err := atomicfile.MkdirPrivate(fresh); err != nil {
		t.Error(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.MkdirPrivate(file); err == nil {
		t.Error("made a folder of a file")
	}
}
