package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// Targets of the desktop under load (issue 20): its CPU per call at most
// 25% above serve's under the same load, and a question's popup shown
// within 150 ms p50 of the agent's ask_user.
const (
	desktopCPUTarget = 1.25
	popupP50Target   = 150 * time.Millisecond
)

// loadResult is what a load run measured: the process's CPU time over
// the load, the calls the load clients made, and, for the desktop, the
// delay from each question asked to its popup shown.
type loadResult struct {
	cpu    cpuSplit
	calls  int64
	popups []time.Duration
	// seconds is how long the load ran.
	seconds float64
}

// cpuPerCall is the CPU time spent per call.
func (r loadResult) cpuPerCall() time.Duration {
	return perCall(r.cpu.total, r.calls)
}

func perCall(cpu time.Duration, calls int64) time.Duration {
	if calls == 0 {
		return 0
	}
	return cpu / time.Duration(calls)
}

// cpuSplit is a process's CPU time, and the part of it in two kinds of
// thread: the main thread, which is the desktop's UI thread (fyne's loop
// holds it; in serve it is one of Go's threads), and Mesa's llvmpipe
// threads, which paint the window in software under Xvfb (a GPU's work
// on a person's desktop).
type cpuSplit struct{ total, main, painting time.Duration }

// readCPU is a process's CPU time so far; zero when it cannot be read.
// Threads that ended are in the total only (llvmpipe's live as long as
// the window).
func readCPU(pid int) cpuSplit {
	c := cpuSplit{total: statCPU(fmt.Sprintf("/proc/%d/stat", pid)), main: statCPU(fmt.Sprintf("/proc/%d/task/%d/stat", pid, pid))}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, _ := os.ReadDir(dir)
	for _, task := range tasks {
		comm, err := os.ReadFile(filepath.Join(dir, task.Name(), "comm"))
		if err == nil && strings.HasPrefix(string(comm), "llvmpipe") {
			c.painting += statCPU(filepath.Join(dir, task.Name(), "stat"))
		}
	}
	return c
}

func (c cpuSplit) sub(before cpuSplit) cpuSplit {
	return cpuSplit{total: c.total - before.total, main: c.main - before.main, painting: c.painting - before.painting}
}

// loadRounds is how many runs of the load each of serve and the desktop
// makes, taking turns, each going first in one round. The same build's CPU
// for the same load moves by up to a third from run to run on this machine
// (serve alone: 8.5–11.0 s in runs of 30 s; 15.8 and 20.5 s in the two
// runs of 60 s of one make load), with what else the machine does; that
// only ever adds CPU, so each side's cheapest run per call is compared, as
// make bench compares the servers' best rounds.
const loadRounds = 2

// checkDesktopLoad prints each run's CPU per call, the desktop's
// cheapest against serve's, and the popups' delays in every desktop run,
// and fails on a missed target.
func checkDesktopLoad(t *testing.T, serves, desks []loadResult) {
	t.Helper()
	for _, runs := range []struct {
		side string
		rs   []loadResult
	}{{"serve", serves}, {"desktop", desks}} {
		for i, r := range runs.rs {
			line := fmt.Sprintf("%s, run %d: %.1f s of CPU for %d calls, %v per call", runs.side, i+1, r.cpu.total.Seconds(), r.calls, r.cpuPerCall())
			t.Log(line)
			fmt.Println(line)
		}
	}
	if len(serves) == 0 || len(desks) == 0 {
		t.Fatalf("%d runs of serve and %d of the desktop: nothing to compare", len(serves), len(desks))
	}
	serve, desk := cheapest(serves), cheapest(desks)
	ratio := float64(desk.cpuPerCall()) / float64(serve.cpuPerCall())
	line := fmt.Sprintf("desktop CPU: %.1f s for %d calls (%v per call) against serve's %.1f s for %d calls (%v per call), each side's cheapest run: %.3f× (target at most %.2f×)",
		desk.cpu.total.Seconds(), desk.calls, desk.cpuPerCall(), serve.cpu.total.Seconds(), serve.calls, serve.cpuPerCall(), ratio, desktopCPUTarget)
	verdict(t, line, ratio <= desktopCPUTarget)
	// Where the difference is, in each run: the UI thread and software
	// painting, or the rest, which does what serve does.
	for i, r := range desks {
		rest := r.cpu.total - r.cpu.main - r.cpu.painting
		line = fmt.Sprintf("desktop CPU, run %d, split: fyne's UI thread %.1f s (%.0f%% of a core), llvmpipe painting %.1f s, the other threads %.1f s, %.2f× serve's per call",
			i+1, r.cpu.main.Seconds(), 100*r.cpu.main.Seconds()/r.seconds, r.cpu.painting.Seconds(), rest.Seconds(),
			float64(perCall(rest, r.calls))/float64(serve.cpuPerCall()))
		t.Log(line)
		fmt.Println(line)
	}
	var popups []time.Duration
	for _, r := range desks {
		if len(r.popups) == 0 {
			t.Errorf("MISSED: no question's popup was seen during a run of the desktop")
		}
		popups = append(popups, r.popups...)
	}
	if len(popups) == 0 {
		return
	}
	p50, p99 := percentile(popups, 50), percentile(popups, 99)
	line = fmt.Sprintf("popups: %d shown, ask_user to popup p50 %v, p99 %v (target p50 under %v)", len(popups), p50.Round(time.Millisecond), p99.Round(time.Millisecond), popupP50Target)
	verdict(t, line, p50 < popupP50Target)
}

// cheapest is the run that spent the least CPU per call.
func cheapest(runs []loadResult) loadResult {
	return slices.MinFunc(runs, func(a, b loadResult) int { return cmp.Compare(a.cpuPerCall(), b.cpuPerCall()) })
}

func verdict(t *testing.T, line string, met bool) {
	t.Helper()
	if !met {
		t.Errorf("MISSED: %s", line)
		return
	}
	t.Logf("met: %s", line)
	fmt.Println("met: " + line)
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// statCPU reads the user and system CPU time of a process's or thread's
// stat file (utime and stime, in clock ticks of 1/100 s on Linux).
func statCPU(path string) time.Duration {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after it (utime and stime are fields 14 and 15).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// popupWatch reads the desktop's log for the probe's "question popup
// shown" lines and hands on each question's ID with the time it was seen.
type popupWatch struct {
	w    *io.PipeWriter
	seen chan shownPopup
}

type shownPopup struct {
	id string
	at time.Time
}

var popupShown = regexp.MustCompile(`question popup shown.*question=(\S+)`)

func newPopupWatch() *popupWatch {
	r, w := io.Pipe()
	p := &popupWatch{w: w, seen: make(chan shownPopup, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := popupShown.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case p.seen <- shownPopup{id: m[1], at: time.Now()}:
				default: // nobody reads: the serve run
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return p
}

func (p *popupWatch) Write(b []byte) (int, error) { return p.w.Write(b) }

// startProbe makes the probe agent (the assistant's copy whose questions
// come to the desktop only) and returns the probe: until ctx ends, one
// client calls it with a question at a time, and each question's popup,
// once seen, is timed from the question's asking and answered through
// the control channel, as the person at the desktop would. Before it
// returns, one question goes round untimed: the window is up and follows
// the core, so that the goroutines counted before the load are the
// running app's. The probe's last call is answered before it returns.
func startProbe(t *testing.T, ctl *control.Client, url string, popups *popupWatch) func(ctx context.Context) []time.Duration {
	t.Helper()
	agents, err := ctl.Agents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(agents, func(a agent.Agent) bool { return a.Slug == "assistant" })
	if i < 0 {
		t.Fatalf("no assistant agent among %d", len(agents))
	}
	p := agents[i]
	p.ID, p.Slug, p.Name, p.Routing = "", "prober", "Prober", agent.RouteDesktop
	if _, err := ctl.SaveAgent(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	token, err := ctl.CreateToken(context.Background(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadClient(url, token, mcp.ProtocolVersion20251125, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	var (
		mu     sync.Mutex
		delays []time.Duration
		wg     sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Go(func() { // the person at the desktop, answering the probe's questions
		for {
			select {
			case <-done:
				return
			case s := <-popups.seen:
				qs, err := ctl.Questions(context.Background())
				if err != nil {
					t.Errorf("questions: %v", err)
					return
				}
				i := slices.IndexFunc(qs, func(q control.QuestionInfo) bool { return q.ID == s.id && q.Agent == "prober" })
				if i < 0 {
					continue // a load client's, which its client answers
				}
				mu.Lock()
				delays = append(delays, s.at.Sub(qs[i].AskedAt))
				mu.Unlock()
				if err := ctl.Answer(context.Background(), s.id, map[string]any{"answer": "carry on"}, false); err != nil {
					t.Errorf("answer %s: %v", s.id, err)
				}
			}
		}
	})
	handle := ""
	call := func() error {
		var req mcp.CallToolRequest
		req.Params.Name = "prober"
		req.Params.Arguments = map[string]any{"message": "ask: Carry on?", "conversation": handle}
		// Not ctx: a call started goes on until its popup is answered.
		res, err := c.CallTool(context.Background(), req)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		if err != nil {
			return fmt.Errorf("the probe's call: %w", err)
		}
		handle, _ = res.Meta.AdditionalFields[mcpserver.ConversationMetaKey].(string)
		return nil
	}
	warm := call()
	mu.Lock()
	delays = nil // the first includes the window's start
	mu.Unlock()
	if warm != nil {
		close(done)
		wg.Wait()
		t.Fatal(warm)
	}
	return func(ctx context.Context) []time.Duration {
		for ctx.Err() == nil {
			if err := call(); err != nil {
				t.Errorf("%v", err)
				break
			}
		}
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return delays
	}
}
