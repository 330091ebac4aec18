package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

// tool returns the named tool of a catalog made with opts.
func tool(t *testing.T, name string, opts tools.Options) agent.Tool {
	t.Helper()
	for _, tl := range tools.Catalog(opts) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q in the catalog", name)
	return nil
}

// call runs a tool with JSON arguments.
func call(t *testing.T, tl agent.Tool, a agent.Agent, args string) (string, error) {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	return tl.Call(context.Background(), a, raw)
}

// wantUserError fails unless err is an *agent.UserError whose message
// contains every fragment.
func wantUserError(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", fragments)
	}
	var ue *agent.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an *agent.UserError", err, err)
	}
	for _, f := range fragments {
		if !strings.Contains(ue.Msg, f) {
			t.Errorf("error message %q does not contain %q", ue.Msg, f)
		}
	}
}

// tree is a test layout:
//
//	base/a/b          the allowed folder (allowed)
//	base/a/bc         a prefix sibling of it (sibling)
//	base/outside      somewhere else (outside)
//	base/second       a second allowed folder (second)
//
// allowed holds hello.txt, sub/nested.txt and symbolic links: in-link →
// hello.txt, out-file → outside/secret.txt, out-dir → outside,
// sibling-link → ../bc, dangling-out → outside/new.txt (missing) and
// dangling-in → new-target.txt (missing, inside).
type tree struct {
	base, allowed, sibling, outside, second string
	agent                                   agent.Agent
}

func newTree(t *testing.T) tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := tree{
		base:    base,
		allowed: filepath.Join(base, "a", "b"),
		sibling: filepath.Join(base, "a", "bc"),
		outside: filepath.Join(base, "outside"),
		second:  filepath.Join(base, "second"),
	}
	files := map[string]string{
		filepath.Join(tr.allowed, "hello.txt"):         "hello\n",
		filepath.Join(tr.allowed, "sub", "nested.txt"): "nested\n",
		filepath.Join(tr.sibling, "secret.txt"):        "sibling secret\n",
		filepath.Join(tr.outside, "secret.txt"):        "outside secret\n",
		filepath.Join(tr.outside, "dir", "deeper.txt"): "deeper secret\n",
		filepath.Join(tr.second, "other.txt"):          "other\n",
	}
	for p, content := range files {
		mustWrite(t, p, content, 0o644)
	}
	links := map[string]string{
		"in-link":      "hello.txt",
		"out-file":     filepath.Join(tr.outside, "secret.txt"),
		"out-dir":      tr.outside,
		"sibling-link": filepath.Join("..", "bc"),
		"dangling-out": filepath.Join(tr.outside, "new.txt"),
		"dangling-in":  "new-target.txt",
	}
	for name, dest := range links {
		if err := os.Symlink(dest, filepath.Join(tr.allowed, name)); err != nil {
			t.Skipf("symbolic links are not available: %v", err)
		}
	}
	tr.agent = agent.Agent{Slug: "test", Folders: []string{tr.allowed, tr.second}}
	return tr
}

func mustWrite(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// snapshot maps every path under dir to its content ("<dir>" for folders,
// "-> dest" for links), to show that nothing changed there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			dest, err := os.Readlink(p)
			got[p] = "-> " + dest
			return err
		case d.IsDir():
			got[p] = "<dir>"
		default:
			data, err := os.ReadFile(p)
			got[p] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// args encodes a JSON arguments object from name, value pairs.
func args(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(data)
}
