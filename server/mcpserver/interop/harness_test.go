package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/servertest"
)

const (
	module        = "github.com/deskhand/deskhand"
	fakeOllamaPkg = module + "/models/ollama/ollamatest/testdata/fakeollama"

	npmTimeout    = 5 * time.Minute
	buildTimeout  = 5 * time.Minute
	startTimeout  = 30 * time.Second
	stopTimeout   = 10 * time.Second
	scriptTimeout = 3 * time.Minute
	stampName     = ".deskhand-interop-stamp"
	// node22Relative is where .ci/node22.sh (make node22, part of make test) puts node, npm and
	// npx of Node 22, under the module's root.
	node22Relative = ".cache/node22/node_modules/.bin/node"
)

// binDir holds the binaries built once per test binary.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "deskhand-interop-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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

// testdataDir is the absolute path of testdata (tests run in the package
// directory).
func testdataDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// nodeSetup is what the Node side of a test needs.
type nodeSetup struct {
	dir   string // testdata, with node_modules
	node  string // node binary for the scripts
	npm   string // the npm that goes with it
	path  string // PATH for npm and the scripts: node's folder first
	major int    // its major version
	// node22Reason says why there is no Node >= 22 (the conformance CLI
	// needs it); empty when node is one.
	node22Reason string
}

// env is the environment of npm and of the scripts: a "node" or "npx" they
// start, or npm's "#!/usr/bin/env node", is the same Node.
func (s nodeSetup) env(extra ...string) []string {
	return append(append(os.Environ(), "PATH="+s.path), extra...)
}

// require22 skips the test, or fails it under CI=true, when node is older
// than Node.js 22.
func (s nodeSetup) require22(t *testing.T) {
	t.Helper()
	if s.node22Reason != "" {
		skipOrFail(t, "%s", s.node22Reason)
	}
}

// setupNode picks node and npm, checks the version and installs the pinned
// packages. The node is DESKHAND_NODE when set, else the Node 22 that make
// node22 (part of make test) installs under .cache/node22 (.ci/node22.sh), else node on PATH; npm
// is the one beside that node when there is one, else npm on PATH.
func setupNode(t *testing.T) nodeSetup {
	t.Helper()
	if testing.Short() {
		t.Skip("interop tests run npm, build binaries and start servers; skipped with -short")
	}
	var s nodeSetup
	var err error
	if s.node = os.Getenv("DESKHAND_NODE"); s.node != "" {
		if s.major, err = nodeMajor(s.node); err != nil {
			skipOrFail(t, "DESKHAND_NODE=%s does not run: %v", s.node, err)
		}
	} else {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join(root, filepath.FromSlash(node22Relative))
		if _, err := os.Stat(local); err == nil {
			if s.major, err = nodeMajor(local); err == nil {
				s.node = local
			} else {
				t.Logf("the Node 22 in %s does not run here (%v); using node on PATH", local, err)
			}
		}
		if s.node == "" {
			if s.node, err = exec.LookPath("node"); err != nil {
				skipOrFail(t, "node is not installed (need Node.js >= 22 with npm: run make node22, or set DESKHAND_NODE): %v", err)
			}
			if s.major, err = nodeMajor(s.node); err != nil {
				skipOrFail(t, "cannot run %s: %v", s.node, err)
			}
		}
	}
	s.path = filepath.Dir(s.node) + string(os.PathListSeparator) + os.Getenv("PATH")
	s.npm = filepath.Join(filepath.Dir(s.node), exe("npm"))
	if _, err := os.Stat(s.npm); err != nil {
		if s.npm, err = exec.LookPath("npm"); err != nil {
			skipOrFail(t, "npm is not installed (need Node.js >= 22 with npm: run make node22, or set DESKHAND_NODE): %v", err)
		}
	}
	if s.major < 20 {
		skipOrFail(t, "%s is Node.js %d; the TypeScript SDKs need Node.js >= 20", s.node, s.major)
	}
	if s.major < 22 {
		s.node22Reason = fmt.Sprintf("%s is Node.js %d, and @modelcontextprotocol/conformance needs Node.js >= 22 (fs.globSync): "+
			"run make node22 (installs Node 22 into .cache/node22 on linux/amd64 and linux/arm64), or set DESKHAND_NODE to a Node 22 binary (%s/%s)",
			s.node, s.major, runtime.GOOS, runtime.GOARCH)
	}
	s.dir = testdataDir(t)
	installNodeModules(t, s)
	t.Logf("node: %s (Node.js %d), npm: %s", s.node, s.major, s.npm)
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
	dir := s.dir
	stampFile := filepath.Join(dir, "node_modules", stampName)
	want, haveLock, err := lockStamp(dir)
	if err != nil {
		return "", err
	}
	if haveLock {
		if got, err := os.ReadFile(stampFile); err == nil && string(got) == want {
			return "node_modules is up to date with package-lock.json", nil
		}
	}
	args := []string{"ci", "--no-audit", "--no-fund"}
	if !haveLock {
		args[0] = "install"
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.npm, args...)
	cmd.Dir = dir
	cmd.Env = s.env()
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
		return "", fmt.Errorf("%s %s in %s failed (%s): %v\n%s", s.npm, strings.Join(args, " "), dir, took, err, out.String())
	}
	if want, _, err = lockStamp(dir); err != nil { // npm install writes the lock
		return "", err
	}
	if err := os.WriteFile(stampFile, []byte(want), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("npm %s took %s", strings.Join(args, " "), took), nil
}

// lockStamp identifies an installation: package.json, package-lock.json and
// the platform (optional packages depend on it).
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

var (
	buildOnce sync.Once
	buildErr  error
	buildLog  string
)

// binaries are the deskhand command and the fake Ollama.
type binaries struct{ deskhand, fakeOllama string }

func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// buildBinaries builds both commands once per test binary (with -race when
// the tests run with it).
func buildBinaries(t *testing.T) binaries {
	t.Helper()
	b := binaries{deskhand: filepath.Join(binDir, exe("deskhand")), fakeOllama: filepath.Join(binDir, exe("fakeollama"))}
	ran := false
	buildOnce.Do(func() {
		ran = true
		if buildErr = consultSources(); buildErr != nil {
			return
		}
		start := time.Now()
		for _, target := range []struct{ out, pkg string }{{b.deskhand, module}, {b.fakeOllama, fakeOllamaPkg}} {
			args := []string{"build"}
			if raceEnabled {
				args = append(args, "-race")
			}
			args = append(args, "-o", target.out, target.pkg)
			ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
			out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
			cancel()
			if err != nil {
				buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
		buildLog = fmt.Sprintf("built deskhand and fakeollama (race=%v) in %s", raceEnabled, time.Since(start).Round(100*time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if ran {
		t.Log(buildLog)
	}
	return b
}

// consultSources stats the module's source files. go test caches a passing
// result keyed on the test binary and on the files and environment variables
// the test binary itself consults; deskhand is built by a subprocess, so
// without this a cached PASS would survive changes to the server or to the
// Node scripts.
func consultSources() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	watched := map[string]bool{".go": true, ".sql": true, ".mod": true, ".sum": true, ".mjs": true, ".json": true}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist): // removed while walking
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

// goEnv is the environment of the binaries built here: a -race binary
// otherwise sleeps a second before exiting (GORACE atexit_sleep_ms).
func goEnv() []string {
	env := os.Environ()
	if _, set := os.LookupEnv("GORACE"); raceEnabled && !set {
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return env
}

// process is a started command whose output is collected.
type process struct {
	name   string
	cmd    *exec.Cmd
	output *servertest.Output
	done   chan struct{} // closed when the process has exited and its output is read
	err    error         // Wait's result, set before done closes
}

// start runs bin with args; every output line goes to the buffer, and lines
// are offered to watch (when set) until it returns true.
func start(t *testing.T, name, bin string, args []string, watch func(line string) bool) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), output: &servertest.Output{}, done: make(chan struct{})}
	p.cmd.Env = goEnv()
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.output, line)
			if watch != nil && watch(line) {
				watch = nil
			}
		}
		io.Copy(p.output, pr) // after an over-long line
	}()
	go func() {
		err := p.cmd.Wait()
		pw.Close()
		<-read // all output is in the buffer once done is closed
		p.err = err
		close(p.done)
	}()
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGINT and waits stopTimeout for a clean exit (status 0);
// anything else fails the test. The output is logged when the test failed.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if !p.exited() {
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Errorf("%s: SIGINT: %v", p.name, err)
		}
	}
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("%s did not exit cleanly after SIGINT: %v", p.name, p.err)
		}
	case <-time.After(stopTimeout):
		p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not exit within %s of SIGINT; killed", p.name, stopTimeout)
	}
	if t.Failed() {
		t.Logf("%s output:\n%s", p.name, p.output.String())
	}
}

// startFakeOllama starts the fake Ollama and returns its URL.
func startFakeOllama(t *testing.T, bin string) string {
	t.Helper()
	addr := make(chan string, 1)
	p := start(t, "fakeollama", bin, []string{"-addr", "127.0.0.1:0"}, func(line string) bool {
		if rest, ok := strings.CutPrefix(line, "listening on "); ok {
			addr <- strings.TrimSpace(rest)
			return true
		}
		return false
	})
	t.Cleanup(func() { p.stop(t) })
	select {
	case u := <-addr:
		return u
	case <-p.done:
		t.Fatalf("fakeollama exited before listening: %v\n%s", p.err, p.output.String())
	case <-time.After(startTimeout):
		t.Fatalf("fakeollama did not print \"listening on\" within %s:\n%s", startTimeout, p.output.String())
	}
	return ""
}

// deskhand is a running "deskhand serve".
type deskhand struct {
	bin  string
	data string
	url  string // the MCP endpoint from the "serving your agents at" line
}

// startDeskhand runs "deskhand serve" on a free loopback port with a fresh
// data folder, waits until the server card answers, and stops it with
// SIGINT when the test ends.
func startDeskhand(t *testing.T, bin, ollamaURL string, extra ...string) *deskhand {
	t.Helper()
	// Not t.TempDir: the control socket lives in the data folder, and a
	// Unix socket path must stay short (104 bytes on macOS).
	data, err := os.MkdirTemp("", "dhi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		d, retry := tryServe(t, bin, data, port, ollamaURL, extra)
		if d != nil {
			return d
		}
		if !retry {
			t.FailNow()
		}
		if attempt == 3 {
			t.Fatalf("deskhand serve could not bind a free port in %d attempts", attempt)
		}
		t.Logf("port %s was taken before deskhand could bind it; retrying", port)
	}
}

// tryServe starts deskhand once; retry is true when it lost the port race.
func tryServe(t *testing.T, bin, data, port, ollamaURL string, extra []string) (d *deskhand, retry bool) {
	t.Helper()
	addr := "127.0.0.1:" + port
	args := append([]string{"serve", "--data", data, "--addr", addr, "--ollama", ollamaURL}, extra...)
	banner := make(chan string, 1)
	const marker = "serving your agents at "
	p := start(t, "deskhand serve", bin, args, func(line string) bool {
		if _, rest, ok := strings.Cut(line, marker); ok {
			url, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
			banner <- url
			return true
		}
		return false
	})
	// serve prints its banner once its listeners are bound: from then on
	// the kernel queues connections, so one GET of the card proves it
	// answers.
	var url string
	select {
	case url = <-banner:
	case <-p.done:
		out := p.output.String()
		if strings.Contains(out, "cannot listen") {
			return nil, true
		}
		t.Errorf("deskhand serve %s exited before serving: %v\n%s", strings.Join(args[1:], " "), p.err, out)
		return nil, false
	case <-time.After(startTimeout):
		p.stop(t)
		t.Errorf("deskhand serve never printed %q within %s:\n%s", marker, startTimeout, p.output.String())
		return nil, false
	}
	t.Cleanup(func() { p.stop(t) })
	card := "http://" + addr + "/mcp/server-card"
	resp, err := (&http.Client{Timeout: startTimeout}).Get(card)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s after the banner: %v\n%s", card, statusOf(resp, err), p.output.String())
		return nil, false
	}
	if want := "http://" + addr + "/mcp"; url != want {
		t.Errorf("deskhand serve says it serves at %q, want %q", url, want)
		return nil, false
	}
	t.Logf("deskhand serving at %s (data %s)", url, data)
	return &deskhand{bin: bin, data: data, url: url}, false
}

func statusOf(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// freePort picks a free loopback port (there is a small window in which
// another program could take it; startDeskhand retries).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// createToken runs "deskhand token create NAME" against the running server
// and returns the token it prints.
func (d *deskhand) createToken(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, d.bin, "token", "create", name, "--data", d.data)
	cmd.Env = goEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("deskhand token create %s: %v\nstdout: %s\nstderr: %s", name, err, stdout.String(), stderr.String())
	}
	token := strings.TrimSpace(stdout.String())
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		t.Fatalf("deskhand token create %s printed %q on stdout, want the token alone\nstderr: %s", name, stdout.String(), stderr.String())
	}
	return token
}

// scriptRun is a finished Node script.
type scriptRun struct {
	stdout, stderr string
	err            error
	took           time.Duration
}

func (r scriptRun) output() string {
	return fmt.Sprintf("--- stdout ---\n%s--- stderr ---\n%s", r.stdout, r.stderr)
}

// runNode runs node with args in the testdata folder, with extra env.
func runNode(t *testing.T, s nodeSetup, env []string, args ...string) scriptRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.node, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env(append([]string{"NO_COLOR=1", "FORCE_COLOR=0"}, env...)...)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s (%v)", scriptTimeout, err)
	}
	return scriptRun{stdout: stdout.String(), stderr: stderr.String(), err: err, took: time.Since(start)}
}

// readJSON decodes a JSON file.
func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
