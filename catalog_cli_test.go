package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

// listChanged counts a client's notifications/tools/list_changed; a test
// can wait for the count to pass a mark.
type listChanged struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced at every notification
}

func (l *listChanged) observe(c *client.Client) {
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			l.mu.Lock()
			l.n++
			if l.changed != nil {
				close(l.changed)
				l.changed = nil
			}
			l.mu.Unlock()
		}
	})
}

func (l *listChanged) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// waitAbove waits until more than n notifications came, or timeout ends;
// it reports whether they came.
func (l *listChanged) waitAbove(n int, timeout <-chan time.Time) bool {
	for {
		l.mu.Lock()
		if l.n > n {
			l.mu.Unlock()
			return true
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			return false
		}
	}
}

// watcher connects a client of the era that listens for catalog changes:
// a legacy one on its GET stream, a modern one through subscriptions/listen.
func watcher(t *testing.T, url, token, era string) (*client.Client, *listChanged) {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token})}
	if era != mcp.ProtocolVersion20260728 {
		//lint:ignore SA1019 the legacy era's GET stream is what this watcher listens on
		topts = append(topts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	seen := &listChanged{}
	seen.observe(c)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = era
	init.Params.ClientInfo = mcp.Implementation{Name: "watcher", Version: "0"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	if era == mcp.ProtocolVersion20260728 {
		stop, err := c.ListenAsync(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	return c, seen
}

// toolsETag is tools/list's ETag for a 2026-07-28 request.
func toolsETag(t *testing.T, url, token string) string {
	t.Helper()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"etag","version":"0"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("tools/list: %s, ETag %q", resp.Status, resp.Header.Get("ETag"))
	}
	return resp.Header.Get("ETag")
}

// deskhandProcess runs the deskhand command line in a process of its own.
func deskhandProcess(t *testing.T, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "LANG=en_US.UTF-8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("deskhand %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// TestCatalogChangesReachBothEras: while a client of each era watches, a
// third process edits the agents through the command line; both hear of
// each change within a second, and the ETag moves.
func TestCatalogChangesReachBothEras(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	token, _, err := deskhand(t, "--data", srv.dir, "token", "create", "watcher")
	if err != nil {
		t.Fatal(err)
	}
	token = strings.TrimSpace(token)
	_, legacy := watcher(t, srv.url, token, mcp.ProtocolVersion20251125)
	modern, modernSeen := watcher(t, srv.url, token, mcp.ProtocolVersion20260728)
	// The streams open in the background, with no event a client shows:
	// change the catalog (disable and enable the assistant) until both
	// watchers have heard a change, which proves their streams are open.
	for attempt := 0; legacy.count() == 0 || modernSeen.count() == 0; attempt++ {
		if attempt == 20 {
			t.Fatalf("the watchers' streams never opened: legacy %d, modern %d notifications", legacy.count(), modernSeen.count())
		}
		for _, toggle := range []string{"disable", "enable"} {
			if _, _, err := deskhand(t, "--data", srv.dir, "agent", toggle, "assistant"); err != nil {
				t.Fatal(err)
			}
		}
		timeout := time.After(250 * time.Millisecond)
		legacy.waitAbove(0, timeout)
		modernSeen.waitAbove(0, timeout)
	}
	etag := toolsETag(t, srv.url, token)

	for i, edit := range [][]string{
		{"agent", "add", "researcher", "--name", "Researcher", "--model", "llama3.2", "--description", "Finds sources."},
		{"agent", "disable", "assistant"},
		{"agent", "edit", "researcher", "--prompt", "Cite everything."},
		{"agent", "remove", "researcher"},
	} {
		before := [2]int{legacy.count(), modernSeen.count()}
		deskhandProcess(t, append([]string{"--data", srv.dir}, edit...)...)
		within := time.After(time.Second)
		if heardLegacy, heardModern := legacy.waitAbove(before[0], within), modernSeen.waitAbove(before[1], within); !heardLegacy || !heardModern {
			t.Errorf("edit %d (%v): list_changed within a second: legacy %v, modern %v", i, edit, heardLegacy, heardModern)
		}
		if now := toolsETag(t, srv.url, token); now == etag {
			t.Errorf("edit %d (%v): the ETag did not change", i, edit)
		} else {
			etag = now
		}
	}
	res, err := modern.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(res.Tools) != 0 {
		t.Errorf("after the edits the list is %v, %v; want empty (assistant disabled, researcher removed)", res, err)
	}
	list := deskhandProcess(t, "--data", srv.dir, "agent", "list")
	if !strings.Contains(list, "assistant") || strings.Contains(list, "researcher") || !strings.Contains(list, "false") {
		t.Errorf("agent list:\n%s", list)
	}
	srv.stop(t)
}
