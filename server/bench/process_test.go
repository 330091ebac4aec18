package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/models/openai/openaitest"
)

// The figures of the process, by name (printReport checks them against
// each other in processChecks).
const (
	procStart = "process: start to first answered request"
	procIdle  = "process: resident memory, idle"
	procCalls = "process: calls/s, new conversations, 16 clients, fake Ollama"
	procAfter = "process: resident memory after 10,000 conversations"
	// The anonymous part of the resident memory (heap, stacks, SQLite's
	// caches), without the pages of the binary mapped from its file,
	// which the kernel may map in blocks of up to 2 MB of a large folio:
	// information beside the targets, which are on the whole.
	procIdleAnon    = "process: anonymous resident memory, idle"
	procAfterAnon   = "process: anonymous resident memory after 10,000 conversations"
	procPeak16      = "process: peak resident memory, 16 clients"
	procPeak64      = "process: peak resident memory, 64 clients"
	procCalls64     = "process: calls/s, new conversations, 64 clients, fake Ollama"
	procCallsOpenAI = "process: calls/s, new conversations, 16 clients, fake OpenAI-compatible"
	procCallsAnthr  = "process: calls/s, new conversations, 16 clients, fake Anthropic"
	// inProcess16 is the side-by-side row the process is held against:
	// the same call on the same stack, in the benchmark's own process,
	// with a model that answers at once.
	inProcess16 = "deskhand 2026-07-28 call, new conversation ×16"
)

// settle is how long the process is left alone before its resident memory
// is read: an idle app's Go runtime returns freed heap pages to the OS in
// the background (the scavenger), within a second or two of a burst; it
// does not wait for the next forced collection (two minutes).
const settle = 3 * time.Second

// BenchmarkProcess measures the shipped binary, headless: start to first
// answered request, resident memory idle, at its peak under 16 and 64
// clients, and after 10,000 conversations, and calls per second against a
// fake Ollama on loopback that answers at once; then calls per second with
// the agent on each other model adapter's fake (OpenAI-compatible,
// Anthropic). It runs once, whatever b.N.
func BenchmarkProcess(b *testing.B) {
	processOnce.Do(func() { measureProcess(b) })
}

var processOnce sync.Once

// benchClient keeps a connection per worker, as a real MCP client keeps
// its own: http.DefaultClient keeps 2 idle connections per host, so 16
// workers would open a TCP connection for most calls.
var benchClient = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 128,
	IdleConnTimeout:     time.Minute,
}}

func measureProcess(b *testing.B) {
	// DESKHAND_BENCH_BIN measures a binary built before, to hold two
	// builds against each other run after run.
	bin := os.Getenv("DESKHAND_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "deskhand")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/deskhand/deskhand").CombinedOutput(); err != nil {
			b.Fatalf("build: %v\n%s", err, out)
		}
	}
	fake := ollamatest.NewServer(b)

	p := startServe(b, bin, b.TempDir(), fake.URL)
	record(row{Name: procStart, Value: float64(p.started.Microseconds()) / 1e3, Unit: "ms"})
	time.Sleep(time.Second)
	record(row{Name: procIdle, Value: p.rssMB(b), Unit: "MB"})
	record(row{Name: procIdleAnon, Value: rssField(p.cmd.Process.Pid, "RssAnon:"), Unit: "MB"})

	const conversations = 10_000
	perSec, peak := p.drive(b, "assistant", conversations, 16)
	record(row{Name: procCalls, Value: perSec, Unit: "calls/s"})
	record(row{Name: procPeak16, Value: peak, Unit: "MB"})
	benchClient.CloseIdleConnections()
	time.Sleep(settle)
	record(row{Name: procAfter, Value: p.rssMB(b), Unit: "MB"})
	record(row{Name: procAfterAnon, Value: rssField(p.cmd.Process.Pid, "RssAnon:"), Unit: "MB"})

	perSec, peak = p.drive(b, "assistant", 4_000, 64)
	record(row{Name: procCalls64, Value: perSec, Unit: "calls/s"})
	record(row{Name: procPeak64, Value: peak, Unit: "MB"})
	p.stop()

	// The same, with the agent on each other adapter's fake: a provider
	// added with the command line before serve starts, its key (if any)
	// in the data folder's secrets file, there being no keychain.
	oa := openaitest.NewServer(b)
	const key = "bench-key"
	an := anthropictest.NewServer(b, anthropictest.WithAPIKey(key))
	for _, c := range []struct {
		name, kind, url, key, model string
	}{
		{procCallsOpenAI, "openai-compatible", oa.BaseURL(), "", openaitest.DefaultModel},
		{procCallsAnthr, "anthropic", an.URL, key, anthropictest.DefaultModel},
	} {
		data := b.TempDir()
		args := []string{"--data", data, "provider", "add", "fake", "--kind", c.kind, "--url", c.url}
		if c.key != "" {
			args = append(args, "--key-stdin")
		}
		deskhandCLI(b, bin, c.key, args...)
		deskhandCLI(b, bin, "", "--data", data, "agent", "add", "bench", "--provider", "fake", "--model", c.model)
		p := startServe(b, bin, data, fake.URL)
		perSec, _ := p.drive(b, "bench", 2_000, 16)
		record(row{Name: c.name, Value: perSec, Unit: "calls/s"})
		p.stop()
	}
}

// served is a running deskhand serve.
type served struct {
	cmd     *exec.Cmd
	url     string
	started time.Duration // from exec to its first answered request
	once    sync.Once
}

// startServe runs deskhand serve on a free port with no token needed and
// waits for its first answer.
func startServe(b *testing.B, bin, data, ollamaURL string) *served {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &served{url: "http://" + addr + "/mcp"}
	start := time.Now()
	p.cmd = exec.Command(bin, "serve", "--data", data, "--addr", addr, "--ollama", ollamaURL, "--insecure-no-auth")
	p.cmd.Env = benchEnv()
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.stop)
	for !answers(p.url) {
		if time.Since(start) > 10*time.Second {
			b.Fatal("no answer within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	p.started = time.Since(start)
	return p
}

// benchEnv is the environment the binary runs in: no D-Bus session, so no
// keychain (secrets go to the data folder's file).
func benchEnv() []string {
	return append(os.Environ(), "LANG=en_US.UTF-8", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
}

func (p *served) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.cmd.Wait()
	})
}

func (p *served) rssMB(b *testing.B) float64 { return rssMB(b, p.cmd.Process.Pid) }

// drive makes calls new conversations of tool, spread over workers, and
// returns the calls per second and the peak resident memory meanwhile
// (sampled every 10 ms).
func (p *served) drive(b *testing.B, tool string, calls, workers int) (perSec, peakMB float64) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	done := make(chan struct{})
	sampled := make(chan float64)
	go func() {
		peak := 0.0
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, rss(p.cmd.Process.Pid))
			select {
			case <-done:
				sampled <- peak
				return
			case <-tick.C:
			}
		}
	}()
	began := time.Now()
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(calls) {
				if errs[w] = newConversation(p.url, tool); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(done)
	peakMB = <-sampled
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return float64(calls) / elapsed.Seconds(), peakMB
}

// deskhandCLI runs a command of the binary; stdin is its input.
func deskhandCLI(b *testing.B, bin, stdin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Env = benchEnv()
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("deskhand %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`

func post(url, method, name, params string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+`}}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return benchClient.Do(req)
}

func answers(url string) bool {
	resp, err := post(url, "tools/list", "", modernMeta)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// newConversation calls tool with no handle and reads the answer whole,
// so that the connection is kept for the next call.
func newConversation(url, tool string) error {
	resp, err := post(url, "tools/call", tool, `"name":"`+tool+`","arguments":{"message":"hello"},`+modernMeta)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := bufio.NewScanner(resp.Body)
	answered := false
	for body.Scan() {
		line := body.Text()
		if strings.Contains(line, `"isError":true`) {
			return fmt.Errorf("tool error: %s", line)
		}
		answered = answered || strings.Contains(line, `"result"`)
	}
	if err := body.Err(); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !answered {
		return fmt.Errorf("tools/call: %s, answered %v", resp.Status, answered)
	}
	return nil
}

// processChecks prints the process's figures held against each other and
// against the in-process call of the same run, and returns a MISSED line
// for each target missed.
func processChecks(w io.Writer, report []row) []string {
	value := map[string]float64{}
	for _, r := range report {
		if r.Unit != "" {
			value[r.Name] = r.Value
		} else {
			value[r.Name] = r.CallsPerSec
		}
	}
	var missed []string
	if calls, ok := value[procCalls]; ok {
		if in, ok := value[inProcess16]; ok && in > 0 {
			ratio := calls / in
			fmt.Fprintf(w, "process: calls/s at 16 clients over the in-process call (%s, %.0f calls/s): %.2f×\n", inProcess16, in, ratio)
			if ratio < 0.5 {
				missed = append(missed, fmt.Sprintf("MISSED process: calls/s at 16 clients: %.2f× the in-process call (target ≥ 0.5×)", ratio))
			}
		} else {
			fmt.Fprintf(w, "process: calls/s at 16 clients not held against the in-process call: %q was not measured in this run\n", inProcess16)
		}
	}
	idle, hasIdle := value[procIdle]
	if after, ok := value[procAfter]; ok && hasIdle {
		fmt.Fprintf(w, "process: resident memory after 10,000 conversations over idle: %.2f×\n", after/idle)
		if after > 2*idle {
			missed = append(missed, fmt.Sprintf("MISSED process: resident memory after 10,000 conversations: %.2f MB, %.2f× idle (target ≤ 2×)", after, after/idle))
		}
	}
	// Memory under load must not follow the chats in flight: four times
	// the clients may add at most twice what 16 added over idle (their
	// connections and goroutines are per client), plus 8 MB for the
	// heap's own step and the noise of sampling. A buffer per chat would
	// add four times as much.
	p16, ok16 := value[procPeak16]
	p64, ok64 := value[procPeak64]
	if ok16 && ok64 && hasIdle {
		grew16, grew64 := max(p16-idle, 0), max(p64-idle, 0)
		fmt.Fprintf(w, "process: peak resident memory over idle: %.1f MB at 16 clients, %.1f MB at 64\n", grew16, grew64)
		if grew64 > 2*grew16+8 {
			missed = append(missed, fmt.Sprintf("MISSED process: peak resident memory at 64 clients is %.1f MB over idle against %.1f MB at 16 (target ≤ 2× + 8 MB)", grew64, grew16))
		}
	}
	return missed
}

// rssMB reads the process's resident set size.
func rssMB(b *testing.B, pid int) float64 {
	mb := rss(pid)
	if mb == 0 {
		b.Skip("no /proc/PID/status here to read the resident set size from")
	}
	return mb
}

// rss is a process's resident set size in MB; 0 when it cannot be read.
func rss(pid int) float64 { return rssField(pid, "VmRSS:") }

// rssField is a field of /proc/PID/status in MB (VmRSS:, RssAnon:,
// RssFile:); 0 when it cannot be read.
func rssField(pid int, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
