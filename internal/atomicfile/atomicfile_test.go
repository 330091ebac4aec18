package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second, longer than the first"} {
		if err := atomicfile.Write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	// A folder that does not exist: an error, nothing written.
	if err := atomicfile.Write(filepath.Join(dir, "no", "f"), []byte("x"), 0o600); err == nil {
		t.Error("wrote into a missing folder")
	}
}
