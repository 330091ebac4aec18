package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/servertest"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestLoad (make load; skipped unless DESKHAND_LOAD is set) runs 200
// clients, both eras mixed, for DESKHAND_LOAD_SECONDS (default 60) against
// "deskhand serve" with a fake Ollama that streams: they continue their
// conversations and answer the questions agents ask them. Afterwards:
// no call failed, the goroutines are back where they were, memory stayed
// bounded, and every acknowledged message is in SQLite. With a display
// (make load runs it under Xvfb and a D-Bus session) the same load runs
// against the desktop app too (load_desktop_test.go), serve and the app
// taking turns for loadRounds rounds, and the app's CPU and popups are
// checked against their targets.
func TestLoad(t *testing.T) {
	if os.Getenv("DESKHAND_LOAD") == "" {
		t.Skip("a 60 s load run: make load")
	}
	seconds := 60
	if v := os.Getenv("DESKHAND_LOAD_SECONDS"); v != "" {
		fmt.Sscan(v, &seconds)
	}
	bin := filepath.Join(t.TempDir(), "deskhand")
	// The load probe is built in for make load only (ui/desktop/loadprobe.go).
	if out, err := exec.Command("go", "build", "-tags", "loadprobe", "-o", bin, "github.com/deskhand/deskhand").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if os.Getenv("DISPLAY") == "" {
		t.Log("no display: the desktop app's run is skipped (make load runs it under Xvfb)")
		t.Run("serve", func(t *testing.T) { runLoad(t, bin, seconds, false) })
		return
	}
	// serve and the desktop take turns, each first in one round: see
	// loadRounds.
	var serves, desks []loadResult
	for round := range loadRounds {
		for i := range 2 {
			desktop := (round+i)%2 == 1
			name := fmt.Sprint("serve/", round+1)
			if desktop {
				name = fmt.Sprint("desktop/", round+1)
			}
			t.Run(name, func(t *testing.T) {
				r := runLoad(t, bin, seconds, desktop)
				if desktop {
					desks = append(desks, r)
				} else {
					serves = append(serves, r)
				}
			})
		}
	}
	checkDesktopLoad(t, serves, desks)
}

// runLoad runs the load against deskhand serve, or the desktop app (its
// window on the Conversations tab, questions of a probe agent asked in
// popups), and returns the process's CPU time over the load and, for the
// desktop, the popups' delays.
func runLoad(t *testing.T, bin string, seconds int, desktop bool) loadResult {
	clients := 200
	if v := os.Getenv("DESKHAND_LOAD_CLIENTS"); v != "" {
		fmt.Sscan(v, &clients)
	}
	fake := ollamatest.NewServer(t, ollamatest.WithChunkDelay(2*time.Millisecond))
	data := t.TempDir()
	cmd := exec.Command(bin, "serve", "--data", data, "--addr", "127.0.0.1:0", "--ollama", fake.URL)
	cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	if desktop {
		cmd = exec.Command(bin, "--data", data, "--addr", "127.0.0.1:0", "--ollama", fake.URL)
		cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8", "HOME="+t.TempDir())
	}
	out := &servertest.Output{}
	popups := newPopupWatch()
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(out, popups)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil { // not stopped by the test's end
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}()
	url := out.WaitFor(t, regexp.MustCompile(`serving your agents at (\S+)`), 20*time.Second)[1]
	ctl, err := control.Dial(control.SocketPath(data))
	if err != nil {
		t.Fatal(err)
	}
	// A token per client, as each would have: one client's share of the
	// limits is not what this measures.
	tokens := make([]string, clients)
	for i := range tokens {
		if tokens[i], err = ctl.CreateToken(context.Background(), fmt.Sprintf("load-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var probe func(ctx context.Context) []time.Duration
	if desktop {
		probe = startProbe(t, ctl, url, popups)
	}
	before, _ := ctl.Status(context.Background())

	ctx, stop := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer stop()
	cpuBefore, started := readCPU(cmd.Process.Pid), time.Now()
	var delays chan []time.Duration
	if probe != nil {
		delays = make(chan []time.Duration, 1)
		go func() { delays <- probe(ctx) }()
	}
	var (
		wg          sync.WaitGroup
		calls, errs atomic.Int64
		posts       = make([]atomic.Int64, clients) // per client: POSTs answered
		failedCalls atomic.Int64
		mu          sync.Mutex
		acked       = map[string]int{} // conversation → acknowledged calls
		firstErr    error
		peakRSS     float64
	)
	for i := range clients {
		era := mcp.ProtocolVersion20251125
		if i%2 == 1 {
			era = mcp.ProtocolVersion20260728
		}
		wg.Go(func() {
			c, err := loadClient(url, tokens[i], era, &posts[i])
			if err != nil {
				errs.Add(1)
				mu.Lock()
				firstErr = err
				mu.Unlock()
				return
			}
			defer c.Close()
			handle := ""
			for n := 0; ctx.Err() == nil; n++ {
				msg := fmt.Sprintf("message %d of client %d", n, i)
				if n%5 == 4 {
					msg = "ask: What next?"
				}
				var req mcp.CallToolRequest
				req.Params.Name = "assistant"
				req.Params.Arguments = map[string]any{"message": msg, "conversation": handle}
				res, err := c.CallTool(context.Background(), req)
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %v", res.Content)
				}
				if err != nil {
					errs.Add(1)
					failedCalls.Add(1)
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				calls.Add(1)
				handle, _ = res.Meta.AdditionalFields[mcpserver.ConversationMetaKey].(string)
				mu.Lock()
				acked[handle]++
				mu.Unlock()
			}
		})
	}
	go func() {
		for ctx.Err() == nil {
			mu.Lock()
			peakRSS = max(peakRSS, rss(cmd.Process.Pid))
			mu.Unlock()
			time.Sleep(time.Second)
		}
	}()
	wg.Wait()
	res := loadResult{cpu: readCPU(cmd.Process.Pid).sub(cpuBefore), calls: calls.Load(), seconds: time.Since(started).Seconds()}
	if delays != nil {
		if res.popups = <-delays; len(res.popups) == 0 {
			t.Logf("no popup seen; the app's output:\n%s", out.String())
		}
	}
	if errs.Load() > 0 {
		t.Errorf("%d clients failed; the first: %v", errs.Load(), firstErr)
	}
	// The app's keep-alive connections to the model server idle on for
	// 90 s, two goroutines each: they end as they would at Ollama's
	// restart, so that what stays is what the load left.
	fake.CloseClientConnections()
	after := quiesced(ctl, before.Goroutines+goroutinesGrowth)

	// Stopped, Deskhand has written every row of its activity log.
	_ = cmd.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("deskhand ended with %v; its output:\n%s", err, out.String())
		}
	case <-time.After(time.Minute): // a guard against a hung run, not a synchronisation
		_ = cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, in its output
		<-exited
		t.Fatalf("deskhand did not stop within a minute of an interrupt; its output:\n%s", out.String())
	}

	// Every acknowledged call's question is in SQLite.
	db := storetest.OpenAt(t, filepath.Join(data, store.FileName))
	checkLogComplete(t, db, posts, calls.Load()+failedCalls.Load())
	missing := 0
	for conv, n := range acked {
		msgs, err := db.Messages(context.Background(), conv)
		if err != nil {
			t.Fatal(err)
		}
		users := 0
		for _, m := range msgs {
			if m.Role == "user" {
				users++
			}
		}
		if users < n {
			missing += n - users
		}
	}
	t.Logf("%d clients, %d s: %d calls (%.0f/s) in %d conversations; goroutines %d before, %d after; peak RSS %.0f MB; CPU %.1f s",
		clients, seconds, calls.Load(), float64(calls.Load())/float64(seconds), len(acked), before.Goroutines, after.Goroutines, peakRSS, res.cpu.total.Seconds())
	if missing > 0 {
		t.Errorf("%d acknowledged messages are not in SQLite", missing)
	}
	if after.Goroutines > before.Goroutines+goroutinesGrowth {
		t.Errorf("goroutines grew from %d to %d", before.Goroutines, after.Goroutines)
	}
	if peakRSS > 400 {
		t.Errorf("peak RSS %.0f MB", peakRSS)
	}
	return res
}

// goroutinesGrowth bounds the goroutines a load may leave behind.
const goroutinesGrowth = 20

// quiesced closes the load clients' idle connections, as their processes
// ending would, and returns Deskhand's status once its goroutines are
// back within bound, or after ten seconds: the goroutines that served the
// connections end as they see the connections close.
func quiesced(ctl *control.Client, bound int) control.Status {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := ctl.Status(context.Background())
		if err == nil && st.Goroutines <= bound || time.Now().After(deadline) {
			return st
		}
		time.Sleep(50 * time.Millisecond) // another process: nothing to wait on but its answer
	}
}

// checkLogComplete: the activity log holds one row per request of each
// load client (its POSTs: initialize, notifications, calls, answers to
// elicitations), and a tools/call row for every call.
func checkLogComplete(t *testing.T, db *store.DB, posts []atomic.Int64, calls int64) {
	t.Helper()
	clients, err := db.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := make(map[string]int, len(clients)) // client ID → load client
	for _, c := range clients {
		var i int
		if _, err := fmt.Sscanf(c.Name, "load-%d", &i); err == nil {
			ids[c.ID] = i
		}
	}
	rows, err := db.Activity(context.Background(), agent.ActivityFilter{Limit: 10_000_000})
	if err != nil {
		t.Fatal(err)
	}
	logged := make([]int64, len(posts))
	var toolCalls int64
	for _, r := range rows {
		i, ok := ids[r.Client]
		switch {
		case !ok, r.Method == http.MethodGet, r.Method == http.MethodDelete:
			continue
		case r.Method == agent.ActivityQuestion || r.Method == agent.ActivityApproval:
			continue // not requests: the questions the calls asked
		}
		logged[i]++
		if r.Method == string(mcp.MethodToolsCall) {
			toolCalls++
		}
		if r.Outcome == agent.OutcomeDropped {
			t.Errorf("the log dropped rows: %s", r.Text)
		}
	}
	var wrong int
	for i := range posts {
		if logged[i] != posts[i].Load() {
			if wrong++; wrong <= 5 {
				t.Errorf("client load-%d: %d requests answered, %d rows in the activity log", i, posts[i].Load(), logged[i])
			}
		}
	}
	// A 2026-07-28 call that asks is sent again with the answer (SEP-2322).
	if toolCalls < calls {
		t.Errorf("%d tools/call rows for %d calls", toolCalls, calls)
	}
	t.Logf("activity log: %d rows, %d of them tools/call", len(rows), toolCalls)
}

// loadClient connects a client of the era that answers questions,
// counting the POSTs the server answered.
func loadClient(url, token, era string, posts *atomic.Int64) (*client.Client, error) {
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPLogger(quiet),
		transport.WithHTTPBasicClient(&http.Client{Transport: &withToken{token: token, posts: posts}}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era), client.WithElicitationHandler(answerer{}))
	if err := c.Start(context.Background()); err != nil {
		return nil, err
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = era
	init.Params.ClientInfo = mcp.Implementation{Name: "load", Version: "0"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// withToken sends a client's token with every request, the session's
// closing DELETE included (mcp-go sends that one without the headers of
// WithHTTPHeaders, and Deskhand would keep the session), and counts the
// POSTs that got an answer, when posts is set: each is one request the
// activity log must hold.
type withToken struct {
	token string
	posts *atomic.Int64
	// base carries the requests: a client's own connections, as each
	// MCP client is a process of its own (nil: http.DefaultTransport).
	base http.RoundTripper
}

func (t *withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && t.posts != nil {
		t.posts.Add(1)
	}
	return resp, err
}

// answerer is the scripted person behind every client.
type answerer struct{}

func (answerer) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"answer": "carry on"}}}, nil
}
