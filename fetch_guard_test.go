package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestServeFetchStaysOffThisComputer is issue 12's acceptance check
// against "deskhand serve": an agent whose fetch_url needs no approval is
// told by its model to fetch Deskhand's own endpoint and other loopback
// addresses; each is a tool error naming the rule, and no loopback server
// sees a request. The one host it names (a canary) is reached, and a
// redirect from it to a loopback server it does not name is refused at
// that hop.
func TestServeFetchStaysOffThisComputer(t *testing.T) {
	var canaryHits, otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	t.Cleanup(other.Close)
	canary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		canaryHits.Add(1)
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "canary says hello")
	}))
	t.Cleanup(canary.Close)

	var (
		mu   sync.Mutex
		urls []string // what the model asks to fetch, once serve's port is known
	)
	fake := ollamatest.NewServer(t, ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			var results []string
			for _, m := range req.Messages {
				if m.Role == "tool" {
					results = append(results, m.Content)
				}
			}
			return ollamatest.Reply{Content: strings.Join(results, "\n---\n")}
		}
		mu.Lock()
		defer mu.Unlock()
		var calls []api.ToolCall
		for i, u := range urls {
			args, _ := json.Marshal(map[string]string{"url": u})
			calls = append(calls, ollamatest.ToolCall(fmt.Sprintf("call_fetch%04d", i), tools.NameFetchURL, string(args)))
		}
		return ollamatest.Reply{ToolCalls: calls}
	}))

	dir := t.TempDir()
	db := storetest.OpenAt(t, filepath.Join(dir, store.FileName))
	now := time.Now()
	err := db.PutAgent(t.Context(), agent.Agent{ID: "4d1c3f0e-5b6a-4c2d-9e8f-7a6b5c4d3e2f", Slug: agent.DefaultAgentSlug, Name: "Fetcher",
		Backend: agent.BackendOllama, Model: ollamatest.DefaultModel, Enabled: true,
		Tools:          []agent.AgentTool{{Name: tools.NameFetchURL, NeedsApproval: false}},
		ReachableHosts: []string{canary.Listener.Addr().String()}, CreatedAt: now, UpdatedAt: now})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	srv := startServeIn(t, fake, dir)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://"))
	mu.Lock()
	urls = []string{srv.url, "http://localhost:" + port + "/", "http://[::1]:" + port + "/", canary.URL + "/", canary.URL + "/hop"}
	mu.Unlock()

	token, _, err := deskhand(t, "--data", dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	res := callAssistant(t, mcpClient(t, srv.url, strings.TrimSpace(token)), map[string]any{"message": "fetch them all"})
	results := strings.Split(firstTextOf(res), "\n---\n")
	if res.IsError || len(results) != 5 {
		t.Fatalf("the turn's answer: %q", firstTextOf(res))
	}
	for i, want := range []string{
		"it leads to 127.0.0.1:" + port + ", which is Deskhand's own endpoint",
		"it leads to localhost:" + port + " (", // 127.0.0.1 or ::1, as the system resolves it
		"it leads to [::1]:" + port + ", which is Deskhand's own endpoint",
		"canary says hello",
		"it leads to " + other.Listener.Addr().String() + ", which is a loopback address",
	} {
		if !strings.Contains(results[i], want) {
			t.Errorf("fetch of %s gave %q, want it to say %q", urls[i], results[i], want)
		}
	}
	if n := canaryHits.Load(); n != 2 {
		t.Errorf("the canary saw %d requests, want 2", n)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the server behind the redirect saw %d requests", n)
	}
	srv.stop(t)
}

// firstTextOf is a result's first text block.
func firstTextOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	text, _ := res.Content[0].(mcp.TextContent)
	return text.Text
}
