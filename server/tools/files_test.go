package tools_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

const noFolders = "no folders are allowed for this agent; add one in its settings"

func TestReadFile(t *testing.T) {
	tr := newTree(t)
	read := tool(t, tools.NameReadFile, tools.Options{})
	tests := []struct {
		name, path string
		want       string   // the content, when it succeeds
		wantErr    []string // fragments of the refusal otherwise
	}{
		{name: "relative", path: "hello.txt", want: "hello\n"},
		{name: "absolute", path: filepath.Join(tr.allowed, "hello.txt"), want: "hello\n"},
		{name: "nested", path: "sub/nested.txt", want: "nested\n"},
		{name: "dot dot that stays inside", path: "./sub/../hello.txt", want: "hello\n"},
		{name: "second folder", path: filepath.Join(tr.second, "other.txt"), want: "other\n"},
		{name: "link inside to inside", path: "in-link", want: "hello\n"},
		{name: "dot dot out", path: "../../outside/secret.txt",
			wantErr: []string{`access denied: the path "../../outside/secret.txt" leads outside the folders this agent may use: "` + tr.allowed + `", "` + tr.second + `"`}},
		{name: "dot dot to prefix sibling", path: "../bc/secret.txt",
			wantErr: []string{"access denied", "../bc/secret.txt", tr.allowed}},
		{name: "absolute outside", path: filepath.Join(tr.outside, "secret.txt"),
			wantErr: []string{"access denied", filepath.Join(tr.outside, "secret.txt"), tr.allowed}},
		{name: "absolute prefix sibling", path: filepath.Join(tr.sibling, "secret.txt"),
			wantErr: []string{"access denied", tr.allowed}},
		{name: "link inside to a file outside", path: "out-file",
			wantErr: []string{"access denied", `"out-file"`, "through a symbolic link"}},
		{name: "link dir component", path: "out-dir/secret.txt",
			wantErr: []string{"access denied", "out-dir/secret.txt"}},
		{name: "link dir component deeper", path: "out-dir/dir/deeper.txt", wantErr: []string{"access denied"}},
		{name: "link to prefix sibling", path: "sibling-link/secret.txt", wantErr: []string{"access denied"}},
		{name: "root", path: string(filepath.Separator), wantErr: []string{"access denied"}},
		{name: "missing", path: "missing.txt", wantErr: []string{`"missing.txt"`, "does not exist"}},
		{name: "dangling link", path: "dangling-in", wantErr: []string{"does not exist"}},
		{name: "folder", path: "sub", wantErr: []string{"is a folder", tools.NameListDir}},
		{name: "NUL in path", path: "hello.txt\x00.png", wantErr: []string{"NUL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arguments := args("path", tt.path)
			got, err := call(t, read, tr.agent, arguments)
			if tt.wantErr != nil {
				wantUserError(t, err, tt.wantErr...)
				if strings.Contains(got, "secret") {
					t.Errorf("refused read returned %q", got)
				}
				// Where a link leads outside is not told.
				if !strings.Contains(tt.path, tr.outside) && strings.Contains(err.Error(), tr.outside) {
					t.Errorf("the refusal names the outside folder: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("read %q: %v", tt.path, err)
			}
			if got != tt.want {
				t.Errorf("read %q = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestReadFileTruncates(t *testing.T) {
	dir := t.TempDir()
	a := agent.Agent{Folders: []string{dir}}
	mustWrite(t, filepath.Join(dir, "long.txt"), strings.Repeat("0123456789", 3), 0o644)
	// "abcdefghi" then "é" (2 bytes) straddles the 10-byte cut.
	mustWrite(t, filepath.Join(dir, "utf8.txt"), "abcdefghiéé", 0o644)
	mustWrite(t, filepath.Join(dir, "exact.txt"), "0123456789", 0o644)
	mustWrite(t, filepath.Join(dir, "empty.txt"), "", 0o644)
	read := tool(t, tools.NameReadFile, tools.Options{MaxReadBytes: 10})
	tests := []struct {
		path, want string
	}{
		{"long.txt", "0123456789\n\n[truncated: the file is 30 bytes; only the first 10 bytes are shown (the read limit is 10 bytes)]"},
		{"utf8.txt", "abcdefghi\n\n[truncated: the file is 13 bytes; only the first 9 bytes are shown (the read limit is 10 bytes)]"},
		{"exact.txt", "0123456789"},
		{"empty.txt", "(the file is empty)"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := call(t, read, a, args("path", tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadFileRefusesBinary(t *testing.T) {
	dir := t.TempDir()
	a := agent.Agent{Folders: []string{dir}}
	mustWrite(t, filepath.Join(dir, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 0o644)
	// A NUL past the read limit is not seen: the part shown is text.
	mustWrite(t, filepath.Join(dir, "late-nul.txt"), "text text\x00", 0o644)
	_, err := call(t, tool(t, tools.NameReadFile, tools.Options{}), a, `{"path": "image.png"}`)
	wantUserError(t, err, `"image.png"`, "binary")
	got, err := call(t, tool(t, tools.NameReadFile, tools.Options{MaxReadBytes: 4}), a, `{"path": "late-nul.txt"}`)
	if err != nil || !strings.HasPrefix(got, "text\n\n[truncated") {
		t.Errorf("late NUL: got %q, %v", got, err)
	}
}

// TestReadFileSpecialFile checks that a named pipe is refused rather than
// opened (which would block).
func TestReadFileSpecialFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system")
	}
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := call(t, tool(t, tools.NameReadFile, tools.Options{}), agent.Agent{Folders: []string{dir}}, `{"path": "pipe"}`)
	wantUserError(t, err, "not a regular file")
}

func TestFolderSettings(t *testing.T) {
	tr := newTree(t)
	read := tool(t, tools.NameReadFile, tools.Options{})
	link := filepath.Join(tr.base, "link-to-allowed")
	if err := os.Symlink(tr.allowed, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tr.base, "gone")
	tests := []struct {
		name    string
		folders []string
		path    string
		want    string
		wantErr []string
	}{
		{name: "folder given through a link", folders: []string{link}, path: "hello.txt", want: "hello\n"},
		{name: "real path of a folder given through a link", folders: []string{link}, path: filepath.Join(tr.allowed, "hello.txt"), want: "hello\n"},
		{name: "path through the link", folders: []string{tr.allowed}, path: filepath.Join(link, "hello.txt"), want: "hello\n"},
		{name: "unclean folder", folders: []string{tr.allowed + "/./"}, path: "hello.txt", want: "hello\n"},
		{name: "missing first folder, relative path", folders: []string{missing, tr.allowed}, path: "hello.txt",
			wantErr: []string{"relative", missing, "absolute path"}},
		{name: "missing first folder, absolute path", folders: []string{missing, tr.allowed}, path: filepath.Join(tr.allowed, "hello.txt"), want: "hello\n"},
		{name: "every folder missing", folders: []string{missing}, path: filepath.Join(tr.allowed, "hello.txt"),
			wantErr: []string{"none of this agent's folders", missing}},
		{name: "relative folder matches nothing", folders: []string{"a/b"}, path: filepath.Join(tr.allowed, "hello.txt"),
			wantErr: []string{"none of this agent's folders"}},
		{name: "parent folder allowed", folders: []string{filepath.Join(tr.base, "a")}, path: "bc/secret.txt", want: "sibling secret\n"},
		{name: "no folders", folders: nil, path: "hello.txt", wantErr: []string{noFolders}},
		{name: "blank folders", folders: []string{"", "  "}, path: "hello.txt", wantErr: []string{noFolders}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, read, agent.Agent{Folders: tt.folders}, args("path", tt.path))
			if tt.wantErr != nil {
				wantUserError(t, err, tt.wantErr...)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestNoFolders(t *testing.T) {
	cases := map[string]string{
		tools.NameReadFile:  `{"path": "a.txt"}`,
		tools.NameListDir:   `{"path": "."}`,
		tools.NameWriteFile: `{"path": "a.txt", "content": "x"}`,
	}
	for name, arg := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := call(t, tool(t, name, tools.Options{}), agent.Agent{Slug: "bare"}, arg)
			wantUserError(t, err, noFolders)
		})
	}
}

func TestListDir(t *testing.T) {
	tr := newTree(t)
	mustWrite(t, filepath.Join(tr.allowed, "weird\nname.txt"), "", 0o644)
	list := tool(t, tools.NameListDir, tools.Options{})
	tests := []struct {
		name, path string
		want       string
		wantErr    []string
	}{
		{name: "allowed folder", path: ".", want: tr.allowed + " (9 entries):\n" +
			"dangling-in@\tsymbolic link\n" +
			"dangling-out@\tsymbolic link\n" +
			"hello.txt\t6 bytes\n" +
			"in-link@\tsymbolic link\n" +
			"out-dir@\tsymbolic link\n" +
			"out-file@\tsymbolic link\n" +
			"sibling-link@\tsymbolic link\n" +
			"sub/\n" +
			"\"weird\\nname.txt\"\t0 bytes"},
		{name: "subfolder", path: filepath.Join(tr.allowed, "sub"), want: filepath.Join(tr.allowed, "sub") + " (1 entry):\nnested.txt\t7 bytes"},
		{name: "second folder", path: tr.second, want: tr.second + " (1 entry):\nother.txt\t6 bytes"},
		{name: "dot dot", path: "..", wantErr: []string{"access denied", `".."`, tr.allowed}},
		{name: "absolute outside", path: tr.outside, wantErr: []string{"access denied"}},
		{name: "prefix sibling", path: tr.sibling, wantErr: []string{"access denied"}},
		{name: "link to a folder outside", path: "out-dir", wantErr: []string{"access denied", `"out-dir"`}},
		{name: "link dir component", path: "out-dir/dir", wantErr: []string{"access denied"}},
		{name: "link to prefix sibling", path: "sibling-link", wantErr: []string{"access denied"}},
		{name: "a file", path: "hello.txt", wantErr: []string{"not a folder", tools.NameReadFile}},
		{name: "missing", path: "nope", wantErr: []string{"does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, list, tr.agent, args("path", tt.path))
			if tt.wantErr != nil {
				wantUserError(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestListDirCapsEntries(t *testing.T) {
	dir := t.TempDir()
	for i := range 1005 {
		mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%04d", i)), "", 0o644)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := tool(t, tools.NameListDir, tools.Options{})
	a := agent.Agent{Folders: []string{dir}}
	got, err := call(t, list, a, `{"path": "."}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	if len(lines) != 1+1000+1 {
		t.Fatalf("got %d lines, want a header, 1000 entries and a note", len(lines))
	}
	if !strings.HasSuffix(lines[0], "(1006 entries):") || lines[1] != "empty/" || lines[1000] != "f0998\t0 bytes" {
		t.Errorf("unexpected listing: %q … %q", lines[:2], lines[1000])
	}
	if want := "[truncated: only the first 1000 of 1006 entries are shown; list a subfolder or read a file by name for the rest]"; lines[1001] != want {
		t.Errorf("note = %q, want %q", lines[1001], want)
	}
	got, err = call(t, list, a, `{"path": "empty"}`)
	if err != nil || !strings.HasSuffix(got, "is empty.") {
		t.Errorf("empty folder: %q, %v", got, err)
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name, path, content string
		prepare             func(t *testing.T, tr tree)
		check               func(t *testing.T, tr tree) // after a success
		want                string                      // the result's prefix
		wantErr             []string
	}{
		{
			name: "create", path: "new.txt", content: "fresh",
			want: "Created ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "new.txt"), "fresh", 0o644)
			},
		},
		{
			name: "create empty with parents", path: "deep/er/new.txt", content: "",
			want: "Created ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "deep", "er", "new.txt"), "", 0o644)
			},
		},
		{
			name: "replace keeps mode 0600", path: "private.txt", content: "new",
			prepare: func(t *testing.T, tr tree) { mustWrite(t, filepath.Join(tr.allowed, "private.txt"), "old", 0o600) },
			want:    "Replaced ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "private.txt"), "new", 0o600)
			},
		},
		{
			name: "replace keeps mode 0755", path: "sub/run.sh", content: "#!/bin/sh\n",
			prepare: func(t *testing.T, tr tree) { mustWrite(t, filepath.Join(tr.allowed, "sub", "run.sh"), "old", 0o755) },
			want:    "Replaced ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "sub", "run.sh"), "#!/bin/sh\n", 0o755)
			},
		},
		{
			name: "second folder", path: filepath.Join("..", "..", "second", "other.txt"), content: "changed",
			want: "Replaced ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.second, "other.txt"), "changed", 0o644)
			},
		},
		{
			name: "through a link inside to inside", path: "in-link", content: "via link",
			want: "Replaced ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "hello.txt"), "via link", 0o644)
				if fi, err := os.Lstat(filepath.Join(tr.allowed, "in-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("in-link is no longer a link: %v, %v", fi, err)
				}
			},
		},
		{
			name: "through a dangling link inside to inside", path: "dangling-in", content: "target",
			want: "Created ",
			check: func(t *testing.T, tr tree) {
				wantFile(t, filepath.Join(tr.allowed, "new-target.txt"), "target", 0o644)
			},
		},
		{name: "dot dot out", path: "../../outside/new.txt", content: "x", wantErr: []string{"access denied", "../../outside/new.txt", tr0}},
		{name: "dot dot to prefix sibling", path: "../bc/secret.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "absolute outside", path: "$outside/secret.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "absolute prefix sibling", path: "$sibling/new.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "link to a file outside", path: "out-file", content: "x", wantErr: []string{"access denied", `"out-file"`}},
		{name: "new file whose parent links outside", path: "out-dir/new.txt", content: "x", wantErr: []string{"access denied", "out-dir/new.txt"}},
		{name: "new folders under a link outside", path: "out-dir/x/y/new.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "dangling link to outside", path: "dangling-out", content: "x", wantErr: []string{"access denied", `"dangling-out"`}},
		{name: "under a dangling link to outside", path: "dangling-out/x.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "link to prefix sibling", path: "sibling-link/new.txt", content: "x", wantErr: []string{"access denied"}},
		{name: "a folder", path: "sub", content: "x", wantErr: []string{"is a folder"}},
		{name: "the allowed folder", path: ".", content: "x", wantErr: []string{"allowed folder"}},
		{name: "under a file", path: "hello.txt/x", content: "x", wantErr: []string{`"hello.txt/x"`, "not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			if tt.prepare != nil {
				tt.prepare(t, tr)
			}
			before := snapshot(t, tr.base)
			path := strings.NewReplacer("$outside", tr.outside, "$sibling", tr.sibling).Replace(tt.path)
			arguments := args("path", path, "content", tt.content)
			got, err := call(t, tool(t, tools.NameWriteFile, tools.Options{}), tr.agent, arguments)
			if tt.wantErr != nil {
				wantErr := make([]string, len(tt.wantErr))
				for i, f := range tt.wantErr {
					wantErr[i] = strings.ReplaceAll(f, tr0, tr.allowed)
				}
				wantUserError(t, err, wantErr...)
				if after := snapshot(t, tr.base); !maps.Equal(before, after) {
					t.Errorf("a refused write changed the files:\nbefore %v\nafter  %v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, fmt.Sprintf("(%d bytes)", len(tt.content))) {
				t.Errorf("result %q, want it to start with %q and give the size", got, tt.want)
			}
			tt.check(t, tr)
			wantNoTempFiles(t, tr.base)
		})
	}
}

// tr0 stands for the allowed folder in expected messages.
const tr0 = "$allowed"

func TestWriteFileIsAtomic(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be replaced on Windows")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.txt")
	mustWrite(t, p, "old content", 0o640)
	before, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	write := tool(t, tools.NameWriteFile, tools.Options{})
	if _, err := call(t, write, agent.Agent{Folders: []string{dir}}, `{"path": "notes.txt", "content": "new content"}`); err != nil {
		t.Fatal(err)
	}
	// A reader that had the file open still sees the old content whole:
	// the new file was renamed into place, not written over the old one.
	now, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := before.ReadAt(buf, 0)
	if got := string(buf[:n]); got != "old content" {
		t.Errorf("the open file now reads %q; the write was not a rename", got)
	}
	if string(now) != "new content" {
		t.Errorf("the path reads %q, want the new content", now)
	}
	fiBefore, _ := before.Stat()
	fiAfter, _ := os.Stat(p)
	if os.SameFile(fiBefore, fiAfter) {
		t.Error("the file was rewritten in place")
	}
	wantFile(t, p, "new content", 0o640)
	wantNoTempFiles(t, dir)
}

func TestWriteFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	write := tool(t, tools.NameWriteFile, tools.Options{})
	a := agent.Agent{Folders: []string{dir}}
	contents := map[string]bool{}
	errs := make(chan error, 20)
	for i := range 20 {
		content := strings.Repeat(fmt.Sprint(i%10), 10000)
		contents[content] = true
		go func() {
			_, err := write.Call(t.Context(), a, []byte(fmt.Sprintf(`{"path": "same.txt", "content": %q}`, content)))
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "same.txt"))
	if err != nil || !contents[string(data)] {
		t.Errorf("the file holds a mix of writes (%d bytes), %v", len(data), err)
	}
	wantNoTempFiles(t, dir)
}

func wantFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file: %v", p, fi.Mode())
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != mode {
		t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), mode)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != content {
		t.Errorf("%s holds %q, want %q", p, data, content)
	}
}

func wantNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	for p := range snapshot(t, dir) {
		if strings.Contains(filepath.Base(p), "deskhand-tmp") {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
}

// TestHardLinksOutOfTheFolder: a hard link inside an allowed folder to a
// file outside it passes every path check (the link's own path is
// inside). read_file refuses files with more than one name; write_file
// replaces the name with a new file, so the file outside never changes.
func TestHardLinksOutOfTheFolder(t *testing.T) {
	tr := newTree(t)
	secret := filepath.Join(tr.outside, "secret.txt")
	hard := filepath.Join(tr.allowed, "hard.txt")
	if err := os.Link(secret, hard); err != nil {
		t.Skipf("hard links are not available: %v", err)
	}
	read := tool(t, tools.NameReadFile, tools.Options{})
	got, err := call(t, read, tr.agent, args("path", "hard.txt"))
	wantUserError(t, err, `cannot read "hard.txt"`, "2 hard links", "outside the allowed folders")
	if strings.Contains(got, "outside secret") {
		t.Errorf("read_file returned the outside file: %q", got)
	}
	// One name again: readable.
	if got, err := call(t, read, tr.agent, args("path", "hello.txt")); err != nil || got != "hello\n" {
		t.Errorf("a file with one name: %q, %v", got, err)
	}

	write := tool(t, tools.NameWriteFile, tools.Options{})
	if _, err := call(t, write, tr.agent, `{"path":"hard.txt","content":"new"}`); err != nil {
		t.Fatal(err)
	}
	wantFile(t, secret, "outside secret\n", 0o644)
	wantFile(t, hard, "new", 0o644)
}
