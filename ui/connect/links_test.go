package connect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// symlink makes link (and its folder) point at target, or skips the test
// where the OS does not let us.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make links here: %v", err)
	}
}

// snapshot lists every file under dir with its mode, time and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String() + " " + fi.ModTime().Format(time.RFC3339Nano)
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += " " + string(b)
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProjectLinksOutRefused: in a project, a link that leads out of the
// project folder (the file's own, a folder's, a chain, or one to a file not
// there yet) is refused by Connect, Disconnect and Status: nothing outside
// is written, created or chmodded, and the link stays.
func TestProjectLinksOutRefused(t *testing.T) {
	tests := []struct {
		name   string
		client Client
		plant  func(t *testing.T, project, outside string) // makes the links
	}{
		{"file link", Cursor, func(t *testing.T, project, outside string) {
			symlink(t, filepath.Join("..", "..", "elsewhere", "settings.json"), filepath.Join(project, ".cursor", "mcp.json"))
		}},
		{"absolute file link", VSCode, func(t *testing.T, project, outside string) {
			symlink(t, filepath.Join(outside, "settings.json"), filepath.Join(project, ".vscode", "mcp.json"))
		}},
		{"link to a file not there yet", ClaudeCode, func(t *testing.T, project, outside string) {
			symlink(t, filepath.Join("..", "elsewhere", "new.json"), filepath.Join(project, ".mcp.json"))
		}},
		{"folder link", Cursor, func(t *testing.T, project, outside string) {
			symlink(t, filepath.Join("..", "elsewhere"), filepath.Join(project, ".cursor"))
		}},
		{"chain of links", ClaudeCode, func(t *testing.T, project, outside string) {
			symlink(t, "inner.json", filepath.Join(project, ".mcp.json"))
			symlink(t, filepath.Join("sub", "..", "..", "elsewhere", "settings.json"), filepath.Join(project, "inner.json"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			root := t.TempDir()
			env.Project = filepath.Join(root, "repo")
			outside := filepath.Join(root, "elsewhere")
			writeFile(t, filepath.Join(outside, "settings.json"), []byte(`{"mcpServers": {}}`), 0o644)
			tc.plant(t, env.Project, outside)
			before := snapshot(t, root)

			_, errConnect := Connect(tc.client, env, entryFor(tc.client))
			_, errDisconnect := Disconnect(tc.client, env, "")
			_, errStatus := Status(tc.client, env, "")
			p, _ := Path(tc.client, env)
			for _, err := range []error{errConnect, errDisconnect, errStatus} {
				var ue *UnsafePathError
				if !errors.As(err, &ue) || ue.Problem != LeavesProject || ue.Path != p {
					t.Fatalf("error = %v, want a link out of the project refused", err)
				}
				for _, want := range []string{p, "outside the project folder", "run again"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message %q does not say %q", err, want)
					}
				}
			}
			if after := snapshot(t, root); !equalMaps(before, after) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestLinksFollowed: a link that stays inside the project, and any link
// in user scope, is followed: the file it leads to is edited in place,
// the link stays a link, and the result names the real file.
func TestLinksFollowed(t *testing.T) {
	tests := []struct {
		name    string
		client  Client
		project bool
		link    string // the link, relative to the home or project folder
		target  string // what it points at, as written in the link
		real    string // the file edited, relative to the home or project folder
	}{
		{"project file link inside", Cursor, true, ".cursor/mcp.json", "../config/cursor.json", "config/cursor.json"},
		{"project folder link inside", VSCode, true, ".vscode", "config/vscode", "config/vscode/mcp.json"},
		{"user file link", Cursor, false, ".cursor/mcp.json", "../dotfiles/cursor.json", "dotfiles/cursor.json"},
		{"user folder link", Codex, false, ".codex", "dotfiles/codex", "dotfiles/codex/config.toml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			base := env.Home
			if tc.project {
				env.Project = t.TempDir()
				base = env.Project
			}
			real := filepath.Join(base, filepath.FromSlash(tc.real))
			body := cursorFixture
			if tc.client == Codex {
				body = codexFixture
			}
			writeFile(t, real, []byte(body), 0o644)
			link := filepath.Join(base, filepath.FromSlash(tc.link))
			symlink(t, filepath.FromSlash(tc.target), link)

			res, err := Connect(tc.client, env, entryFor(tc.client))
			if err != nil {
				t.Fatal(err)
			}
			wantReal, _ := filepath.EvalSymlinks(real)
			if !res.Changed || res.Real != wantReal {
				t.Errorf("result = %+v, want the real file %s named", res, wantReal)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("link replaced: %v", err)
			}
			if !strings.Contains(string(readFile(t, real)), testToken) || fileMode(t, real) != 0o600 {
				t.Errorf("%s not written", real)
			}
			if !strings.HasPrefix(res.Backup, wantReal+backupInfix) {
				t.Errorf("backup %q not beside %s", res.Backup, wantReal)
			}
			if st, err := Status(tc.client, env, ""); err != nil || st.Condition != Connected || st.Real != wantReal {
				t.Errorf("Status = %+v, %v", st, err)
			}
		})
	}
}

// TestProjectFolderThroughALink: a project folder reached through a link
// (as /tmp is on macOS) is the project.
func TestProjectFolderThroughALink(t *testing.T) {
	env := testEnv(t)
	root := t.TempDir()
	env.Project = filepath.Join(root, "alias")
	symlink(t, filepath.Join(root, "repo"), env.Project)
	if err := os.Mkdir(filepath.Join(root, "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(Cursor, env, entryFor(Cursor)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "repo", ".cursor", "mcp.json")); err != nil {
		t.Error(err)
	}
}

// TestLinksToNoRegularFileRefused: a link to a folder or to nothing, and
// a folder where the file should be, are refused in either scope and left
// as they were.
func TestLinksToNoRegularFileRefused(t *testing.T) {
	tests := []struct {
		name    string
		project bool
		make    func(t *testing.T, p, base string)
		problem Problem
	}{
		{"link to a folder", false, func(t *testing.T, p, base string) {
			if err := os.MkdirAll(filepath.Join(base, "dir"), 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(base, "dir"), p)
		}, NotRegular},
		{"folder", true, func(t *testing.T, p, base string) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, NotRegular},
		{"link to nothing", false, func(t *testing.T, p, base string) {
			symlink(t, filepath.Join(base, "gone.json"), p)
		}, DanglingLink},
		{"link to nothing in the project", true, func(t *testing.T, p, base string) {
			symlink(t, "gone.json", p)
		}, DanglingLink},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			base := env.Home
			if tc.project {
				env.Project = t.TempDir()
				base = env.Project
			}
			p, _ := Path(Cursor, env)
			tc.make(t, p, base)
			before := snapshot(t, base)
			_, errConnect := Connect(Cursor, env, entryFor(Cursor))
			_, errStatus := Status(Cursor, env, "")
			for _, err := range []error{errConnect, errStatus} {
				var ue *UnsafePathError
				if !errors.As(err, &ue) || ue.Problem != tc.problem || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "run again") {
					t.Fatalf("error = %v, want problem %d", err, tc.problem)
				}
			}
			if after := snapshot(t, base); !equalMaps(before, after) {
				t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a", "f"), nil, 0o644)
	symlink(t, "a", filepath.Join(dir, "l"))
	symlink(t, dir+"/l/missing/../f", filepath.Join(dir, "abs")) // kept as written, not cleaned
	symlink(t, "loop", filepath.Join(dir, "loop"))
	tests := []struct{ in, want string }{
		{"a/f", "a/f"},
		{"l/f", "a/f"},
		{"l/new/x", "a/new/x"},
		{"l/../l/f", "a/f"},
		{"abs", "a/f"},
	}
	for _, tc := range tests {
		got, err := realPath(filepath.Join(dir, filepath.FromSlash(tc.in)))
		if want := filepath.Join(dir, filepath.FromSlash(tc.want)); err != nil || got != want {
			t.Errorf("realPath(%s) = %q, %v; want %q", tc.in, got, err, want)
		}
	}
	if _, err := realPath(filepath.Join(dir, "loop")); err == nil {
		t.Error("a link to itself resolved")
	}
}
