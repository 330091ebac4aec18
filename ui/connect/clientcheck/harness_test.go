package clientcheck_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/servertest"
)

const (
	module       = "github.com/deskhand/deskhand"
	buildTimeout = 5 * time.Minute
)

// nodeSetup is what the clients need: Node 22 and the installed packages.
type nodeSetup struct {
	dir  string // testdata, with node_modules
	node string
	npm  string
	bin  string // testdata/node_modules/.bin: claude, codex, gemini
	path string // PATH: node's folder first
}

// setupNode picks node and npm (DESKHAND_NODE, else the Node 22 of make
// node22, else node on PATH), requires Node 22 and installs the pinned
// clients.
func setupNode(t *testing.T) nodeSetup {
	t.Helper()
	if testing.Short() {
		t.Skip("the real clients are installed with npm and run against a built deskhand; skipped with -short")
	}
	n, err := servertest.FindNodeJS()
	if err != nil {
		servertest.SkipOrFail(t, "%v", err)
	}
	if n.Major < 22 {
		servertest.SkipOrFail(t, "%s is Node.js %d; Claude Code, Codex and Gemini CLI want Node.js 22: run make node22, or set DESKHAND_NODE to a Node 22 binary", n.Node, n.Major)
	}
	s := nodeSetup{node: n.Node, npm: n.NPM, path: n.Path}
	if s.dir, err = filepath.Abs("testdata"); err != nil {
		t.Fatal(err)
	}
	s.bin = filepath.Join(s.dir, "node_modules", ".bin")
	log, err := n.InstallModules(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node: %s (Node.js %d), npm: %s; %s", n.Node, n.Major, n.NPM, log)
	return s
}

// buildDeskhand builds the deskhand command into dir (with -race when the
// test runs with it).
func buildDeskhand(t *testing.T, dir string) string {
	t.Helper()
	if err := servertest.ConsultSources(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, servertest.Exe("deskhand"))
	args := []string{"build"}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "-o", bin, module)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	start := time.Now()
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built deskhand (race=%v) in %s", raceEnabled, time.Since(start).Round(100*time.Millisecond))
	return bin
}
