package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

// BenchmarkProcess measures the shipped binary, headless: start to first
// answered request, resident memory idle and after 10,000 conversations,
// and calls per second against a fake Ollama on loopback that answers at
// once. It runs once, whatever b.N.
func BenchmarkProcess(b *testing.B) {
	processOnce.Do(func() { measureProcess(b) })
}

var processOnce sync.Once

func measureProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "deskhand")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/deskhand/deskhand").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	fake := ollamatest.NewServer(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "http://" + addr + "/mcp"

	start := time.Now()
	cmd := exec.Command(bin, "serve", "--data", b.TempDir(), "--addr", addr, "--ollama", fake.URL, "--insecure-no-auth")
	cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	for !answers(url) {
		if time.Since(start) > 10*time.Second {
			b.Fatal("no answer within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	record(row{Name: "process: start to first answered request", Value: float64(time.Since(start).Microseconds()) / 1e3, Unit: "ms"})
	time.Sleep(time.Second)
	record(row{Name: "process: resident memory, idle", Value: rssMB(b, cmd.Process.Pid), Unit: "MB"})

	const conversations, workers = 10_000, 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	next := 0
	began := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if n >= conversations || failed != nil {
					return
				}
				if err := newConversation(url); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	record(row{Name: "process: calls/s, new conversations, 16 clients, fake Ollama", Value: conversations / time.Since(began).Seconds(), Unit: "calls/s"})
	record(row{Name: "process: resident memory after 10,000 conversations", Value: rssMB(b, cmd.Process.Pid), Unit: "MB"})
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
	return http.DefaultClient.Do(req)
}

func answers(url string) bool {
	resp, err := post(url, "tools/list", "", modernMeta)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func newConversation(url string) error {
	resp, err := post(url, "tools/call", "assistant", `"name":"assistant","arguments":{"message":"hello"},`+modernMeta)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := bufio.NewScanner(resp.Body)
	for body.Scan() {
		if strings.Contains(body.Text(), `"isError":true`) {
			return fmt.Errorf("tool error: %s", body.Text())
		}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("tools/call: %s", resp.Status)
	}
	return nil
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
func rss(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
