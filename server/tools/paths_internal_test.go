package tools

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	tests := []struct {
		root, p string
		rel     string
		ok      bool
	}{
		{"/a/b", "/a/b", ".", true},
		{"/a/b", "/a/b/c", "c", true},
		{"/a/b", "/a/b/c/d", "c/d", true},
		{"/a/b", "/a/b/..c", "..c", true},
		{"/a/b", "/a/bc", "", false},
		{"/a/b", "/a/bc/d", "", false},
		{"/a/b", "/a", "", false},
		{"/a/b", "/a/c", "", false},
		{"/a/b", "/", "", false},
		{"/", "/etc", "etc", true},
	}
	for _, tt := range tests {
		rel, ok := within(tt.root, tt.p)
		if rel != tt.rel || ok != tt.ok {
			t.Errorf("within(%q, %q) = %q, %v; want %q, %v", tt.root, tt.p, rel, ok, tt.rel, tt.ok)
		}
	}
}

func TestResolveLinks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(parts ...string) string { return filepath.Join(append([]string{base}, parts...)...) }
	if err := os.MkdirAll(j("real", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"to-dir":       j("real", "dir"),
		"relative":     filepath.Join("real", "dir"),
		"chain":        "to-dir",
		"dangling":     j("nowhere", "file"),
		"dangling-rel": filepath.Join("real", "missing", "..", "dir", "new"),
		"loop-a":       "loop-b",
		"loop-b":       "loop-a",
		"to-dangling":  "dangling",
	}
	for name, dest := range links {
		if err := os.Symlink(dest, j(name)); err != nil {
			t.Skipf("symbolic links are not available: %v", err)
		}
	}
	tests := []struct {
		p, want string
		wantErr string
	}{
		{p: j("real", "dir"), want: j("real", "dir")},
		{p: j("real", "dir", "new", "file"), want: j("real", "dir", "new", "file")},
		{p: j("to-dir", "new"), want: j("real", "dir", "new")},
		{p: j("relative", "x", "y"), want: j("real", "dir", "x", "y")},
		{p: j("chain", "new"), want: j("real", "dir", "new")},
		{p: j("dangling"), want: j("nowhere", "file")},
		{p: j("dangling", "below"), want: j("nowhere", "file", "below")},
		{p: j("to-dangling"), want: j("nowhere", "file")},
		{p: j("dangling-rel"), want: j("real", "dir", "new")},
		{p: j("loop-a"), wantErr: "too many symbolic links"},
	}
	for _, tt := range tests {
		got, err := resolveLinks(tt.p, 0)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("resolveLinks(%q) = %q, %v; want an error saying %q", tt.p, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("resolveLinks(%q) = %q, %v; want %q", tt.p, got, err, tt.want)
		}
	}
}

// TestReplaceCleansUp checks that a failed rename leaves no temporary file.
func TestReplaceCleansUp(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "busy", "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// Renaming a file over a non-empty folder fails.
	if err := replace(root, ".", "busy", "busy", []byte("data"), 0o644); err == nil {
		t.Fatal("replace over a non-empty folder succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "busy" {
		t.Errorf("left behind: %v", entries)
	}
}
