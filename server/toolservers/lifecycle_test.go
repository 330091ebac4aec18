package toolservers

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/mark3labs/mcp-go/mcp"
)

// waitLimit bounds every wait on an event, so that a broken test fails
// instead of hanging.
const waitLimit = 60 * time.Second

// recorder keeps a Manager's events for tests to wait on.
type recorder struct {
	mu     sync.Mutex
	events []Event
	more   chan struct{} // closed and replaced at each event
}

func newRecorder() *recorder { return &recorder{more: make(chan struct{})} }

func (r *recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.more)
	r.more = make(chan struct{})
	r.mu.Unlock()
}

// wait returns the first event from index from on that matches ok, and
// the index after it.
func (r *recorder) wait(t *testing.T, from int, what string, ok func(Event) bool) (Event, int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if ok(r.events[i]) {
				e := r.events[i]
				r.mu.Unlock()
				return e, i + 1
			}
		}
		from = len(r.events)
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no event: %s (after %s)", what, waitLimit)
		}
	}
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func stateIs(name string, s State) func(Event) bool {
	return func(e Event) bool { return e.Server == name && e.Status.State == s }
}

// newManager makes a Manager closed at the end of the test, recording
// its events.
func newManager(t *testing.T, o Options, configs ...Config) (*Manager, *recorder) {
	t.Helper()
	rec := newRecorder()
	o.OnChange = rec.add
	if o.LogDir == "" {
		o.LogDir = t.TempDir()
	}
	m := New(o)
	t.Cleanup(func() { _ = m.Close() })
	if err := m.Set(configs); err != nil {
		t.Fatal(err)
	}
	return m, rec
}

func mustCall(t *testing.T, m *Manager, server, tool, args string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	res, err := m.Call(ctx, server, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("call %s %s: %v", server, tool, err)
	}
	return res
}

func statusOf(t *testing.T, m *Manager, name string) Status {
	t.Helper()
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for %s", name)
	return Status{}
}

func requireUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups and signals: Unix only")
	}
}

func TestHelperToolsAndResults(t *testing.T) {
	m, _ := newManager(t, Options{MaxResultBytes: 1000}, helperConfig("helper", "mcp"))
	tools, err := m.Tools(t.Context(), "helper")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ToolInfo{}
	for _, ti := range tools {
		byName[ti.Tool] = ti
	}
	echo, ok := byName["echo"]
	if !ok || echo.Name != "helper__echo" || !echo.Annotations.ReadOnly() || !strings.HasPrefix(echo.Hash, "sha256:") {
		t.Fatalf("echo = %+v", echo)
	}
	if got := mustCall(t, m, "helper", "echo", `{"message":"hi"}`); got.Text != "echo: hi" || got.IsError {
		t.Errorf("echo = %+v", got)
	}
	if got := mustCall(t, m, "helper", "fail", ``); !got.IsError || !strings.Contains(got.Text, "does not exist") {
		t.Errorf("fail = %+v", got)
	}
	big := mustCall(t, m, "helper", "big", `{}`)
	if !big.Truncated || !strings.Contains(big.Text, "[truncated: the result is 6000 bytes; only the first 1000 bytes are shown") {
		t.Errorf("big = %q…", big.Text[len(big.Text)-120:])
	}
	if got := mustCall(t, m, "helper", "image", `{}`); got.Text != "a picture:\n[image: image/png, 9 KB]" {
		t.Errorf("image = %q", got.Text)
	}

	// The agent.Tool adapter: spec, approval default, errors as UserErrors.
	tool := NewTool(m, echo, "")
	if spec := tool.Spec(); spec.Name != "helper__echo" || !strings.Contains(string(spec.Parameters), `"message"`) {
		t.Errorf("spec = %+v", spec)
	}
	if tool.NeedsApprovalByDefault() {
		t.Error("a read-only tool needs approval")
	}
	if NewTool(m, byName["fail"], "").NeedsApprovalByDefault() == false {
		t.Error("a tool that does not say it is read-only does not need approval")
	}
	if _, err := NewTool(m, byName["fail"], "").Call(t.Context(), agent.Agent{}, nil); agent.UserMessage(err) != "the thing you asked for does not exist" {
		t.Errorf("isError through the adapter = %v", err)
	}
}

func TestBadArgumentsAndUnknownTool(t *testing.T) {
	m, _ := newManager(t, Options{}, helperConfig("helper", "mcp"))
	for _, args := range []string{`[1]`, `"text"`, `{"message":`, `{"a":1,"a":2}`, `{} {}`} {
		_, err := m.Call(t.Context(), "helper", "echo", json.RawMessage(args))
		var ue *agent.UserError
		if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "invalid arguments for helper__echo") {
			t.Errorf("args %s: %v", args, err)
		}
	}
	_, err := m.Call(t.Context(), "helper", "nope", nil)
	if msg := agent.UserMessage(err); !strings.Contains(msg, `the tool server helper has no tool "nope" (it has: `) {
		t.Errorf("unknown tool: %v", err)
	}
	_, err = m.Call(t.Context(), "nobody", "echo", nil)
	if msg := agent.UserMessage(err); msg != `there is no tool server named "nobody"` {
		t.Errorf("unknown server: %v", err)
	}
}

func TestIdleStop(t *testing.T) {
	requireUnix(t)
	clock := newFakeClock()
	m, rec := newManager(t, Options{Clock: clock, IdleTimeout: 5 * time.Minute}, helperConfig("helper", "mcp"))
	mustCall(t, m, "helper", "echo", `{"message":"hi"}`)
	st := statusOf(t, m, "helper")
	if st.State != StateRunning || st.PID == 0 || st.Tools == 0 || st.LogFile == "" {
		t.Fatalf("status = %+v", st)
	}
	clock.Advance(4 * time.Minute)
	if s := statusOf(t, m, "helper"); s.State != StateRunning {
		t.Fatalf("stopped before the idle timeout: %+v", s)
	}
	n := rec.len()
	clock.Advance(time.Minute)
	rec.wait(t, n, "stopped when idle", stateIs("helper", StateStopped))
	if alive(t, st.PID) {
		t.Errorf("process %d still runs after the idle stop", st.PID)
	}
	// The next use starts it again.
	mustCall(t, m, "helper", "echo", `{"message":"again"}`)
	if s := statusOf(t, m, "helper"); s.State != StateRunning || s.PID == st.PID {
		t.Errorf("after a new call: %+v (old pid %d)", s, st.PID)
	}
	log, err := os.ReadFile(st.LogFile)
	if err != nil || !strings.Contains(string(log), "helper: serving on stdio") || !strings.Contains(string(log), "stopping: unused for 5m0s") {
		t.Errorf("log file %s: %v\n%s", st.LogFile, err, log)
	}
}

func TestCrashThenRestart(t *testing.T) {
	requireUnix(t)
	m, rec := newManager(t, Options{Clock: newFakeClock()}, helperConfig("helper", "mcp"))
	mustCall(t, m, "helper", "echo", `{"message":"hi"}`)
	pid := statusOf(t, m, "helper").PID
	n := rec.len()
	killPID(t, pid)
	e, _ := rec.wait(t, n, "backing off after the crash", stateIs("helper", StateBackingOff))
	if !strings.Contains(e.Status.LastError, "was killed by signal 9") || e.Status.Failures != 1 {
		t.Errorf("after the crash: %+v", e.Status)
	}
	// The first crash is retried at once, on the next call.
	if got := mustCall(t, m, "helper", "echo", `{"message":"back"}`); got.Text != "echo: back" {
		t.Errorf("after restart: %+v", got)
	}
	if s := statusOf(t, m, "helper"); s.State != StateRunning || s.PID == pid {
		t.Errorf("after restart: %+v (old pid %d)", s, pid)
	}
}

func TestDiesDuringCall(t *testing.T) {
	m, rec := newManager(t, Options{Clock: newFakeClock()}, helperConfig("helper", "mcp"))
	mustCall(t, m, "helper", "echo", `{"message":"hi"}`)
	_, err := m.Call(t.Context(), "helper", "die", nil)
	msg := agent.UserMessage(err)
	if !strings.Contains(msg, "stopped while running die: it exited with status 7") || !strings.Contains(msg, "die: out of memory, giving up") {
		t.Errorf("died during the call: %v", err)
	}
	rec.wait(t, 0, "backing off after dying", stateIs("helper", StateBackingOff))
	if got := mustCall(t, m, "helper", "echo", `{"message":"back"}`); got.Text != "echo: back" {
		t.Errorf("after restart: %+v", got)
	}
}

func TestExitAtOnceEndsFailed(t *testing.T) {
	clock := newFakeClock()
	m, _ := newManager(t, Options{Clock: clock, MaxFailures: 3}, helperConfig("bad", "exit"))
	_, err := m.Call(t.Context(), "bad", "x", nil)
	msg := agent.UserMessage(err)
	if !strings.Contains(msg, "could not start") || !strings.Contains(msg, "exited with status 3") || !strings.Contains(msg, "boom: cannot read /nonexistent/config.json") {
		t.Fatalf("first start: %v", err)
	}
	// Failure 1 is retried at once; failure 2 waits BackoffBase.
	if _, err := m.Call(t.Context(), "bad", "x", nil); !strings.Contains(agent.UserMessage(err), "could not start") {
		t.Fatalf("second start: %v", err)
	}
	st := statusOf(t, m, "bad")
	if st.State != StateBackingOff || st.Failures != 2 || !st.RetryAt.Equal(clock.Now().Add(time.Second)) {
		t.Fatalf("after two failures: %+v", st)
	}
	if _, err := m.Call(t.Context(), "bad", "x", nil); !strings.Contains(agent.UserMessage(err), "it will be started again in 1s") {
		t.Fatalf("while backing off: %v", err)
	}
	clock.Advance(time.Second)
	_, _ = m.Call(t.Context(), "bad", "x", nil)
	st = statusOf(t, m, "bad")
	if st.State != StateFailed || !strings.Contains(st.LastError, "boom") {
		t.Fatalf("after three failures: %+v", st)
	}
	clock.Advance(time.Hour)
	if _, err := m.Call(t.Context(), "bad", "x", nil); !strings.Contains(agent.UserMessage(err), "failed 3 times in a row") {
		t.Fatalf("failed stays failed: %v", err)
	}
	// The person's "try again".
	if err := m.Reset("bad"); err != nil || statusOf(t, m, "bad").State != StateStopped {
		t.Fatalf("reset: %v %+v", err, statusOf(t, m, "bad"))
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	requireUnix(t)
	m := New(Options{LogDir: t.TempDir()})
	defer m.Close()
	if err := m.Set([]Config{helperConfig("helper", "mcp")}); err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, m, "helper", "spawn", `{}`)
	grandchild, err := strconv.Atoi(res.Text)
	if err != nil {
		t.Fatalf("spawn: %+v", res)
	}
	child := statusOf(t, m, "helper").PID
	killLater(t, grandchild)
	exits := map[int]func() bool{}
	for _, pid := range []int{child, grandchild} {
		if !alive(t, pid) {
			t.Fatalf("process %d not running", pid)
		}
		exits[pid] = watchExit(t, pid)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for pid, exited := range exits {
		if !exited() || alive(t, pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	if _, err := m.Call(t.Context(), "helper", "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
}

func TestCancellationReachesServer(t *testing.T) {
	var progress sync.Map
	running := make(chan struct{})
	var once sync.Once
	m, _ := newManager(t, Options{OnProgress: func(ctx context.Context, p Progress) {
		progress.Store(p.Message, p)
		once.Do(func() { close(running) })
	}}, helperConfig("helper", "mcp"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "helper", "sleep", nil)
		done <- err
	}()
	select {
	case <-running:
	case <-time.After(waitLimit):
		t.Fatal("no progress from sleep")
	}
	if p, _ := progress.Load("sleeping"); p.(Progress).Total != 2 || p.(Progress).Tool != "sleep" {
		t.Errorf("progress = %+v", p)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	// cancelled answers only once the server saw sleep's cancellation.
	if got := mustCall(t, m, "helper", "cancelled", `{}`); got.Text != "the sleep was cancelled" {
		t.Errorf("cancelled = %+v", got)
	}
}

func TestCallTimeout(t *testing.T) {
	m, _ := newManager(t, Options{CallTimeout: 300 * time.Millisecond}, helperConfig("helper", "mcp"))
	_, err := m.Call(t.Context(), "helper", "sleep", nil)
	if msg := agent.UserMessage(err); msg != "the tool server helper did not answer sleep within 300ms; the call was cancelled" {
		t.Errorf("timeout: %v", err)
	}
	if got := mustCall(t, m, "helper", "cancelled", `{}`); got.Text != "the sleep was cancelled" {
		t.Errorf("cancelled = %+v", got)
	}
}

func TestListChanged(t *testing.T) {
	m, rec := newManager(t, Options{}, helperConfig("helper", "mcp"))
	before, err := m.Tools(t.Context(), "helper")
	if err != nil {
		t.Fatal(err)
	}
	n := rec.len()
	mustCall(t, m, "helper", "add_tool", `{}`)
	e, _ := rec.wait(t, n, "tool list changed", func(e Event) bool { return e.Server == "helper" && e.ToolsChanged })
	after, _ := m.Tools(t.Context(), "helper")
	if e.Status.Tools != len(before)+1 || len(after) != len(before)+1 {
		t.Errorf("tools: %d before, %d after, event %+v", len(before), len(after), e.Status)
	}
	if got := mustCall(t, m, "helper", "extra", `{}`); got.Text != "extra" {
		t.Errorf("extra = %+v", got)
	}
}

func TestElicitationFromHelper(t *testing.T) {
	m, _ := newManager(t, Options{Elicit: func(ctx context.Context, from Origin, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		if !from.Known || from.Tool != "elicit" || from.Server != "helper" || ctx.Value(callKey{}) == nil {
			t.Errorf("origin = %+v", from)
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
			Content: map[string]any{"name": "Ada"}}}, nil
	}}, helperConfig("helper", "mcp"))
	if got := mustCall(t, m, "helper", "elicit", `{}`); got.Text != "accept map[name:Ada]" {
		t.Errorf("elicit = %+v", got)
	}
}

func TestBadServers(t *testing.T) {
	m, _ := newManager(t, Options{StartTimeout: 3 * time.Second},
		Config{Name: "missing", Command: "/nonexistent/deskhand-no-such-server"},
		helperConfig("chatty", "garbage"),
		Config{Name: "refuses", URL: refusingURL(t)},
	)
	_, err := m.Tools(t.Context(), "missing")
	if msg := agent.UserMessage(err); !strings.Contains(msg, "could not start: cannot run /nonexistent/deskhand-no-such-server") {
		t.Errorf("missing command: %v", err)
	}
	_, err = m.Tools(t.Context(), "chatty")
	if msg := agent.UserMessage(err); !strings.Contains(msg, "did not answer initialize within 3s") || !strings.Contains(msg, "I am a chatty server") {
		t.Errorf("garbage on stdout: %v", err)
	}
	_, err = m.Tools(t.Context(), "refuses")
	if msg := agent.UserMessage(err); !strings.Contains(msg, "could not start") || !strings.Contains(msg, "refused") {
		t.Errorf("refusing URL: %v", err)
	}
}

// refusingURL is an http URL where nothing listens.
func refusingURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/mcp"
}
