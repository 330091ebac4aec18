package clientcheck_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	module         = "github.com/deskhand/deskhand"
	npmTimeout     = 5 * time.Minute
	buildTimeout   = 5 * time.Minute
	stampName      = ".deskhand-clientcheck-stamp"
	node22Relative = ".cache/node22/node_modules/.bin/node"
)

// skipOrFail skips the test, or fails it when CI is "true" (a CI runner
// must have what the test needs).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this fails instead of skipping)", reason)
	}
	t.Skip(reason)
}

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
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var s nodeSetup
	if s.node = os.Getenv("DESKHAND_NODE"); s.node == "" {
		local := filepath.Join(root, filepath.FromSlash(node22Relative))
		if _, err := os.Stat(local); err == nil {
			s.node = local
		} else if s.node, err = exec.LookPath("node"); err != nil {
			skipOrFail(t, "node is not installed (the clients need Node.js 22 with npm: run make node22, or set DESKHAND_NODE): %v", err)
		}
	}
	major, err := nodeMajor(s.node)
	if err != nil {
		skipOrFail(t, "cannot run %s: %v", s.node, err)
	}
	if major < 22 {
		skipOrFail(t, "%s is Node.js %d; Claude Code, Codex and Gemini CLI want Node.js 22: run make node22, or set DESKHAND_NODE to a Node 22 binary", s.node, major)
	}
	s.path = filepath.Dir(s.node) + string(os.PathListSeparator) + os.Getenv("PATH")
	s.npm = filepath.Join(filepath.Dir(s.node), exe("npm"))
	if _, err := os.Stat(s.npm); err != nil {
		if s.npm, err = exec.LookPath("npm"); err != nil {
			skipOrFail(t, "npm is not installed beside %s nor on PATH: %v", s.node, err)
		}
	}
	if s.dir, err = filepath.Abs("testdata"); err != nil {
		t.Fatal(err)
	}
	s.bin = filepath.Join(s.dir, "node_modules", ".bin")
	installNodeModules(t, s)
	t.Logf("node: %s (Node.js %d), npm: %s", s.node, major, s.npm)
	return s
}

func nodeMajor(node string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "-p", "process.versions.node").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	major, _, _ := strings.Cut(strings.TrimSpace(string(out)), ".")
	return strconv.Atoi(major)
}

var (
	npmOnce sync.Once
	npmErr  error
	npmLog  string
)

// installNodeModules runs npm once per test binary, when node_modules is
// missing or was installed from another package-lock.json.
func installNodeModules(t *testing.T, s nodeSetup) {
	t.Helper()
	ran := false
	npmOnce.Do(func() { ran = true; npmLog, npmErr = ensureNodeModules(s) })
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	if ran {
		t.Log(npmLog)
	}
}

func ensureNodeModules(s nodeSetup) (string, error) {
	stampFile := filepath.Join(s.dir, "node_modules", stampName)
	want, err := lockStamp(s.dir)
	if err != nil {
		return "", err
	}
	if got, err := os.ReadFile(stampFile); err == nil && string(got) == want {
		return "node_modules is up to date with package-lock.json", nil
	}
	args := []string{"ci", "--no-audit", "--no-fund"}
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.npm, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "PATH="+s.path)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start).Round(100 * time.Millisecond)
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s", npmTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("%s %s in %s failed (%s): %v\n%s", s.npm, strings.Join(args, " "), s.dir, took, err, out.String())
	}
	if err := os.WriteFile(stampFile, []byte(want), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("npm %s took %s", strings.Join(args, " "), took), nil
}

// lockStamp identifies an installation: package.json, package-lock.json and
// the platform (the clients' native parts are optional packages per
// platform).
func lockStamp(dir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n", runtime.GOOS, runtime.GOARCH)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// buildDeskhand builds the deskhand command into dir (with -race when the
// test runs with it).
func buildDeskhand(t *testing.T, dir string) string {
	t.Helper()
	if err := consultSources(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, exe("deskhand"))
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

// consultSources stats the module's source files: go test caches a passing
// result keyed on the files the test binary itself consults, and deskhand
// is built by a subprocess, so without this a cached PASS would survive
// changes to connect or to the server.
func consultSources() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	watched := map[string]bool{".go": true, ".sql": true, ".mod": true, ".sum": true, ".json": true}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "bin"):
			return filepath.SkipDir
		case !d.IsDir() && watched[filepath.Ext(path)]:
			_, _ = os.Stat(path) // only the recording matters
		}
		return nil
	})
}

// moduleRoot is the folder of go.mod, above the test's directory.
func moduleRoot() (string, error) {
	root, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", errors.New("go.mod not found above the test's directory")
		}
		root = parent
	}
}
