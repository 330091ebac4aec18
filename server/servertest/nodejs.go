package servertest

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

// Tests that run npm packages (the interop suite, the real clients) find
// Node.js and install their pinned packages the same way: NodeJS and
// InstallModules. SkipOrFail, ModuleRoot and ConsultSources serve tests
// that build and run Deskhand as a child process.

// Node22Relative is where make node22 (.ci/node22.sh, part of make test)
// puts Node.js 22, below the module's root.
const Node22Relative = ".cache/node22/node_modules/.bin/node"

// npmTimeout bounds one try of an npm install.
const npmTimeout = 5 * time.Minute

// npmTries is how many times an npm install is tried: one hiccup of the
// registry ("npm error Exit handler never called!") must not fail a run.
const npmTries = 3

// npmBackoff is the wait before the second try, doubled before each
// later one (a variable, so that tests need not wait).
var npmBackoff = 5 * time.Second

// NodeJS is a Node.js with its npm.
type NodeJS struct {
	Node  string
	NPM   string
	Path  string // PATH with node's folder first
	Major int    // the major version
}

// FindNodeJS picks node: DESKHAND_NODE when set, else the Node 22 of make
// node22 when it runs here, else node on PATH; npm is the one beside it,
// else npm on PATH. The error says what is missing and what to do.
func FindNodeJS() (NodeJS, error) {
	var n NodeJS
	var err error
	if n.Node = os.Getenv("DESKHAND_NODE"); n.Node != "" {
		if n.Major, err = nodeMajor(n.Node); err != nil {
			return n, fmt.Errorf("DESKHAND_NODE=%s does not run: %v", n.Node, err)
		}
	} else {
		root, err := ModuleRoot()
		if err != nil {
			return n, err
		}
		local := filepath.Join(root, filepath.FromSlash(Node22Relative))
		if _, err := os.Stat(local); err == nil {
			if n.Major, err = nodeMajor(local); err == nil {
				n.Node = local
			}
		}
		if n.Node == "" {
			if n.Node, err = exec.LookPath("node"); err != nil {
				return n, fmt.Errorf("node is not installed (run make node22, or set DESKHAND_NODE to a Node.js 22 binary): %v", err)
			}
			if n.Major, err = nodeMajor(n.Node); err != nil {
				return n, fmt.Errorf("cannot run %s: %v", n.Node, err)
			}
		}
	}
	n.Path = filepath.Dir(n.Node) + string(os.PathListSeparator) + os.Getenv("PATH")
	n.NPM = filepath.Join(filepath.Dir(n.Node), Exe("npm"))
	if _, err := os.Stat(n.NPM); err != nil {
		if n.NPM, err = exec.LookPath("npm"); err != nil {
			return n, fmt.Errorf("npm is not installed beside %s nor on PATH (run make node22, or set DESKHAND_NODE): %v", n.Node, err)
		}
	}
	return n, nil
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

// Env is the environment in which a "node" or "npx" a script starts, or
// npm's "#!/usr/bin/env node", is this Node.
func (n NodeJS) Env(extra ...string) []string {
	return append(append(os.Environ(), "PATH="+n.Path), extra...)
}

var installs sync.Map // dir → *install: one npm run per folder and test binary

type install struct {
	once sync.Once
	log  string
	err  error
}

// InstallModules installs the packages of dir's package.json (npm ci;
// npm install when there is no package-lock.json) unless node_modules was
// installed from the same files on this platform; at most once per folder
// and test binary. It returns what it did, in words.
func (n NodeJS) InstallModules(dir string) (string, error) {
	v, _ := installs.LoadOrStore(dir, &install{})
	in := v.(*install)
	in.once.Do(func() { in.log, in.err = n.installModules(dir) })
	return in.log, in.err
}

// stampName marks node_modules with the package files it came from.
const stampName = ".deskhand-stamp"

func (n NodeJS) installModules(dir string) (string, error) {
	stampFile := filepath.Join(dir, "node_modules", stampName)
	want, haveLock, err := lockStamp(dir)
	if err != nil {
		return "", err
	}
	if got, err := os.ReadFile(stampFile); haveLock && err == nil && string(got) == want {
		return "node_modules is up to date with package-lock.json", nil
	}
	args := []string{"ci", "--no-audit", "--no-fund"}
	if !haveLock {
		args[0] = "install"
	}
	var failures []string
	wait := npmBackoff
	for try := 1; ; try++ {
		took, err := n.npm(dir, args)
		if err == nil {
			if want, _, err = lockStamp(dir); err != nil { // npm install writes the lock
				return "", err
			}
			if err := os.WriteFile(stampFile, []byte(want), 0o644); err != nil {
				return "", err
			}
			return fmt.Sprintf("npm %s took %s (try %d)", strings.Join(args, " "), took, try), nil
		}
		failures = append(failures, fmt.Sprintf("try %d (%s): %v", try, took, err))
		if try == npmTries {
			return "", fmt.Errorf("%s %s in %s failed %d times:\n%s", n.NPM, strings.Join(args, " "), dir, npmTries, strings.Join(failures, "\n"))
		}
		// The next try starts from a clean node_modules.
		if err := os.RemoveAll(filepath.Join(dir, "node_modules")); err != nil {
			return "", err
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// npm runs npm with args in dir once, bounded by npmTimeout; the error
// carries what npm printed.
func (n NodeJS) npm(dir string, args []string) (took time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.NPM, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, n.Env(), 10*time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start).Round(100 * time.Millisecond)
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s", npmTimeout)
	}
	if err != nil {
		return took, fmt.Errorf("%v\n%s", err, strings.TrimSpace(out.String()))
	}
	return took, nil
}

// lockStamp identifies an installation: package.json, package-lock.json
// and the platform (optional native packages depend on it).
func lockStamp(dir string) (stamp string, haveLock bool, err error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n", runtime.GOOS, runtime.GOARCH)
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) && name == "package-lock.json" {
			return hex.EncodeToString(h.Sum(nil)), false, nil
		}
		if err != nil {
			return "", false, err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

// SkipOrFail skips the test, or fails it when CI is "true": a CI runner
// must have what the test needs.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this fails instead of skipping)", reason)
	}
	t.Skip(reason)
}

// Exe is a program's file name on this system.
func Exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// ModuleRoot is the folder of go.mod, above the test's directory.
func ModuleRoot() (string, error) {
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

// ConsultSources stats the module's source files. go test caches a
// passing result keyed on the files the test binary itself consults; a
// test that builds Deskhand in a subprocess calls this so that a cached
// PASS does not survive a change to the sources.
func ConsultSources() error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	watched := map[string]bool{".go": true, ".sql": true, ".mod": true, ".sum": true, ".mjs": true, ".json": true}
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
