package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/store/atomicfile"
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
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	// A folder that does not exist: an error, nothing written.
	if err := atomicfile.Write(filepath.Join(dir, "no", "f"), []byte("x"), 0o600); err == nil {
		t.Error("wrote into a missing folder")
	}
}

// TestWriteRefusesALink: the rename would replace the link with a file, so
// Write refuses it and leaves the link and what it leads to as they were.
func TestWriteRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if err := atomicfile.Write(link, []byte("new"), 0o600); err == nil {
		t.Fatal("wrote over a link")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced: %v", err)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "old" {
		t.Errorf("target = %q, %v", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}
