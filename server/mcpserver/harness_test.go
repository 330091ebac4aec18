package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/models/sampling"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/store"
)

// eras are the protocol revisions every end-to-end test runs on.
var eras = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728}

// harness is the whole server over real HTTP on 127.0.0.1: a SQLite file,
// the core, the MCP surface, and a fake Ollama driven through api.Client.
type harness struct {
	t      testing.TB
	dbPath string
	ollama *ollamatest.Server
	guard  mcpserver.GuardOptions
	opts   mcpserver.Options // Info, Guard and Logger are set by start

	db   *store.DB
	core *agent.Core
	srv  *mcpserver.Server
	http *httptest.Server
	URL  string
}

func newHarness(t testing.TB, guard mcpserver.GuardOptions, ollamaOpts ...ollamatest.Option) *harness {
	t.Helper()
	h := &harness{t: t, dbPath: filepath.Join(t.TempDir(), store.FileName), ollama: ollamatest.NewServer(t, ollamaOpts...), guard: guard}
	h.start()
	if _, _, err := h.core.Agents().EnsureDefault(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	return h
}

// newHarnessWith is newHarness with server options (Info, Guard and
// Logger are set by start).
func newHarnessWith(t testing.TB, opts mcpserver.Options) *harness {
	t.Helper()
	h := &harness{t: t, dbPath: filepath.Join(t.TempDir(), store.FileName), ollama: ollamatest.NewServer(t), guard: opts.Guard, opts: opts}
	h.start()
	if _, _, err := h.core.Agents().EnsureDefault(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) start() {
	t := h.t
	t.Helper()
	db, err := store.Open(context.Background(), h.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	model, err := ollama.New(h.ollama.URL)
	if err != nil {
		t.Fatal(err)
	}
	core, err := agent.New(context.Background(), agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model, agent.BackendClient: sampling.Model{}},
		Tools: tools.Catalog(tools.Options{}), Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	h.db, h.core = db, core
	opts := h.opts
	opts.Info = mcpserver.Info{Name: "deskhand", Version: "test"}
	opts.Guard = h.guard
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if h.srv, err = mcpserver.New(mcpserver.CoreOf(core), opts); err != nil {
		t.Fatal(err)
	}
	h.http = httptest.NewServer(h.srv.Handler())
	h.URL = h.http.URL + mcpserver.EndpointPath
}

func (h *harness) stop() {
	if h.http == nil {
		return
	}
	h.core.Close()
	h.http.CloseClientConnections()
	h.http.Close()
	if err := h.srv.Close(context.Background()); err != nil {
		h.t.Errorf("close server: %v", err)
	}
	if err := h.db.Close(); err != nil {
		h.t.Errorf("close db: %v", err)
	}
	h.http = nil
}

// restart closes everything and opens it again on the same database file.
func (h *harness) restart() {
	h.stop()
	h.start()
}

func (h *harness) token(name string) string {
	h.t.Helper()
	_, token, err := h.core.Clients().Create(h.t.Context(), name)
	if err != nil {
		h.t.Fatal(err)
	}
	return token
}

// connect opens an mcp-go client pinned to the era.
func connect(t *testing.T, url, version, token string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{
		transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}
	if token != "" {
		topts = append(topts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, append([]client.ClientOption{client.WithProtocolVersion(version)}, opts...)...)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "0"}
	init.Params.ProtocolVersion = version
	res, err := c.Initialize(t.Context(), init)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != version {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
	}
	return c
}

// call invokes the agent tool.
func call(t *testing.T, c *client.Client, tool string, args map[string]any, meta map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := tryCall(t.Context(), c, tool, args, meta)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tryCall is call for a spawned goroutine, which must not stop the test
// (t.Fatal there ends only the goroutine): it returns the protocol error
// for the test's goroutine to check.
func tryCall(ctx context.Context, c *client.Client, tool string, args map[string]any, meta map[string]any) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	if meta != nil {
		req.Params.Meta = &mcp.Meta{AdditionalFields: meta}
	}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w (a protocol error, where a tool result was due)", tool, err)
	}
	return res, nil
}

// callResult is what tryCall returned, sent from a goroutine.
type callResult struct {
	res *mcp.CallToolResult
	err error
}

// goCall runs tryCall on a goroutine; the channel gets its result.
func goCall(ctx context.Context, c *client.Client, tool string, args map[string]any) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		res, err := tryCall(ctx, c, tool, args, nil)
		out <- callResult{res, err}
	}()
	return out
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func firstText(res *mcp.CallToolResult) string {
	if ts := texts(res); len(ts) > 0 {
		return ts[0]
	}
	return ""
}

func handleOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.Meta == nil {
		t.Fatalf("result has no _meta: %+v", res)
	}
	h, _ := res.Meta.AdditionalFields[mcpserver.ConversationMetaKey].(string)
	if h == "" {
		t.Fatalf("result has no handle in _meta: %+v", res.Meta.AdditionalFields)
	}
	ts := texts(res)
	if !strings.Contains(ts[len(ts)-1], h) {
		t.Errorf("last text block %q does not carry the handle %s", ts[len(ts)-1], h)
	}
	return h
}

// rawRequest is the opening request of an era, for guard tests.
func rawRequest(t *testing.T, url, era string) *http.Request {
	t.Helper()
	var body []byte
	var headers map[string]string
	if era == mcp.ProtocolVersion20260728 {
		params := json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"guard","version":"0"}}}`)
		body = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":%s}`, params)
		headers = mcp.StandardHeaders(era, mcp.MethodServerDiscover, params)
		headers["Mcp-Protocol-Version"] = era
	} else {
		body = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"guard","version":"0"}}}`)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// ollamaChat is the request the fake Ollama receives.
type ollamaChat = api.ChatRequest

// send does req and returns the response with its body read and closed.
func send(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// fakeClock is a clock for Options.Now that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// waitUntil checks cond on a ticker until it holds, failing the test after
// d. It is for state no event announces (a task a client polls, a GET
// stream's bookkeeping); where an event exists, wait on it instead.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if cond() {
		return
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return
			}
		case <-deadline.C:
			t.Fatalf("after %v: %s", d, what)
		}
	}
}
