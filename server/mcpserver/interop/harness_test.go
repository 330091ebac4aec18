package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/servertest"
)

const (
	module        = "github.com/deskhand/deskhand"
	fakeOllamaPkg = module + "/models/ollama/ollamatest/testdata/fakeollama"

	buildTimeout  = 5 * time.Minute
	startTimeout  = 30 * time.Second
	stopTimeout   = 10 * time.Second
	scriptTimeout = 3 * time.Minute
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
		servertest.SkipOrFail(t, "%s", s.node22Reason)
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
	n, err := servertest.FindNodeJS()
	if err != nil {
		servertest.SkipOrFail(t, "%v", err)
	}
	s := nodeSetup{node: n.Node, npm: n.NPM, path: n.Path, major: n.Major}
	if s.major < 20 {
		servertest.SkipOrFail(t, "%s is Node.js %d; the TypeScript SDKs need Node.js >= 20", s.node, s.major)
	}
	if s.major < 22 {
		s.node22Reason = fmt.Sprintf("%s is Node.js %d, and @modelcontextprotocol/conformance needs Node.js >= 22 (fs.globSync): "+
			"run make node22 (installs Node 22 into .cache/node22 on linux/amd64 and linux/arm64), or set DESKHAND_NODE to a Node 22 binary (%s/%s)",
			s.node, s.major, runtime.GOOS, runtime.GOARCH)
	}
	s.dir = testdataDir(t)
	log, err := n.InstallModules(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node: %s (Node.js %d), npm: %s; %s", s.node, s.major, s.npm, log)
	return s
}

var (
	buildOnce sync.Once
	buildErr  error
	buildLog  string
)

// binaries are the deskhand command and the fake Ollama.
type binaries struct{ deskhand, fakeOllama string }

// buildBinaries builds both commands once per test binary (with -race when
// the tests run with it).
func buildBinaries(t *testing.T) binaries {
	t.Helper()
	b := binaries{deskhand: filepath.Join(binDir, servertest.Exe("deskhand")), fakeOllama: filepath.Join(binDir, servertest.Exe("fakeollama"))}
	ran := false
	buildOnce.Do(func() {
		ran = true
		if buildErr = servertest.ConsultSources(); buildErr != nil {
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
