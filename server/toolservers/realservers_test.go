package toolservers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/servertest"
	"github.com/mark3labs/mcp-go/mcp"
)

// The reference servers of the MCP project, installed from npm at the
// versions testdata/package-lock.json pins: no one here wrote them.

// nodeServers finds Node.js and installs the pinned servers; it skips the
// test without them (fails under CI=true).
func nodeServers(t *testing.T) (node, modules string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs npm and Node.js servers; skipped with -short")
	}
	n, err := servertest.FindNodeJS()
	if err != nil {
		servertest.SkipOrFail(t, "%v", err)
	}
	if n.Major < 20 {
		servertest.SkipOrFail(t, "%s is Node.js %d; the reference servers need Node.js >= 20 (run make node22)", n.Node, n.Major)
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	log, err := n.InstallModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s (%d); %s", n.Node, n.Major, log)
	return n.Node, filepath.Join(dir, "node_modules", "@modelcontextprotocol")
}

func everythingStdio(t *testing.T, name string) Config {
	node, mods := nodeServers(t)
	return Config{Name: name, Command: node, Args: []string{filepath.Join(mods, "server-everything", "dist", "index.js"), "stdio"}}
}

// hooks are elicitation and sampling hooks that answer as a person and
// a model would, and record what they were asked.
type hooks struct {
	mu       sync.Mutex
	elicited []Origin
	sampled  []Origin
	progress []Progress
}

func (h *hooks) options() Options {
	return Options{
		Elicit: func(ctx context.Context, from Origin, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			h.mu.Lock()
			h.elicited = append(h.elicited, from)
			h.mu.Unlock()
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
				Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"name": "Ada Lovelace"}}}, nil
		},
		Sample: func(ctx context.Context, from Origin, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			h.mu.Lock()
			h.sampled = append(h.sampled, from)
			h.mu.Unlock()
			return &mcp.CreateMessageResult{Model: "deskhand-test", StopReason: "endTurn", SamplingMessage: mcp.SamplingMessage{
				Role: mcp.RoleAssistant, Content: mcp.NewTextContent("tools hum softly")}}, nil
		},
		OnProgress: func(ctx context.Context, p Progress) {
			h.mu.Lock()
			h.progress = append(h.progress, p)
			h.mu.Unlock()
		},
	}
}

// exerciseEverything calls server-everything's tools through m, as an
// agent would.
func exerciseEverything(t *testing.T, m *Manager, name string, h *hooks) {
	tools, err := m.Tools(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]ToolInfo{}
	for _, ti := range tools {
		have[ti.Tool] = ti
		if ti.Name != ToolName(name, ti.Tool) || !strings.HasPrefix(ti.Hash, "sha256:") || len(ti.InputSchema) == 0 {
			t.Errorf("tool %+v", ti)
		}
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation", "trigger-elicitation-request", "trigger-sampling-request"} {
		if _, ok := have[want]; !ok {
			t.Fatalf("%s lists no %s: %v", name, want, tools)
		}
	}
	if lro := have["trigger-long-running-operation"]; !lro.Annotations.ReadOnly() || NewTool(m, lro, "").NeedsApprovalByDefault() {
		t.Errorf("trigger-long-running-operation says it is read-only: %+v", lro.Annotations)
	}
	if NewTool(m, have["trigger-sampling-request"], "").NeedsApprovalByDefault() != true {
		t.Error("trigger-sampling-request (not read-only) does not need approval")
	}

	if got := mustCall(t, m, name, "echo", `{"message":"hello from Deskhand"}`); got.Text != "Echo: hello from Deskhand" || got.IsError {
		t.Errorf("echo = %+v", got)
	}
	if got := mustCall(t, m, name, "get-sum", `{"a":2,"b":40}`); !strings.Contains(got.Text, "42") {
		t.Errorf("get-sum = %+v", got)
	}
	if got := mustCall(t, m, name, "get-sum", `{"a":"two","b":40}`); !got.IsError {
		t.Errorf("get-sum with a string = %+v, want an isError result", got)
	} else {
		t.Logf("isError result: %q", got.Text)
	}
	if got := mustCall(t, m, name, "get-tiny-image", `{}`); !strings.Contains(got.Text, "[image: image/png, ") {
		t.Errorf("get-tiny-image = %q", got.Text)
	}
	got := mustCall(t, m, name, "trigger-long-running-operation", `{"duration":0.4,"steps":2}`)
	if !strings.Contains(got.Text, "Long running operation completed") {
		t.Errorf("long running = %+v", got)
	}
	h.mu.Lock()
	progress := h.progress
	h.mu.Unlock()
	if len(progress) != 2 || progress[1].Progress != 2 || progress[1].Total != 2 || progress[1].Tool != "trigger-long-running-operation" {
		t.Errorf("progress = %+v", progress)
	}
	if got := mustCall(t, m, name, "trigger-elicitation-request", `{}`); !strings.Contains(got.Text, "- Name: Ada Lovelace") {
		t.Errorf("elicitation = %+v", got)
	}
	if got := mustCall(t, m, name, "trigger-sampling-request", `{"prompt":"a haiku about tools"}`); !strings.Contains(got.Text, "tools hum softly") {
		t.Errorf("sampling = %+v", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range append(h.elicited, h.sampled...) {
		if !o.Known || o.Server != name || !strings.HasPrefix(o.Tool, "trigger-") {
			t.Errorf("origin = %+v", o)
		}
	}
	if len(h.elicited) != 1 || len(h.sampled) != 1 {
		t.Errorf("elicited %d, sampled %d", len(h.elicited), len(h.sampled))
	}
}

func TestEverythingStdio(t *testing.T) {
	cfg := everythingStdio(t, "everything")
	cfg.AllowSampling = true
	h := &hooks{}
	m, _ := newManager(t, h.options(), cfg)
	exerciseEverything(t, m, "everything", h)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	node, mods := nodeServers(t)
	url := startEverythingHTTP(t, node, mods)
	h := &hooks{}
	m, _ := newManager(t, h.options(), Config{Name: "everything-http", URL: url, AllowSampling: true,
		Headers: map[string]string{"X-Deskhand-Test": "1"}})
	exerciseEverything(t, m, "everything-http", h)
}

func TestSamplingRefusedUnlessAllowed(t *testing.T) {
	h := &hooks{}
	m, _ := newManager(t, h.options(), everythingStdio(t, "everything"))
	tools, err := m.Tools(t.Context(), "everything")
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tools {
		if ti.Tool == "trigger-sampling-request" {
			t.Error("the server offers sampling tools although sampling was not declared")
		}
	}
	_, err = m.Call(t.Context(), "everything", "trigger-sampling-request", json.RawMessage(`{"prompt":"x"}`))
	if !strings.Contains(agent.UserMessage(err), `has no tool "trigger-sampling-request"`) {
		t.Errorf("sampling tool call: %v", err)
	}
	// Elicitation is declared (the hook is set): its tool is there.
	if got := mustCall(t, m, "everything", "trigger-elicitation-request", `{}`); !strings.Contains(got.Text, "Ada Lovelace") {
		t.Errorf("elicitation = %+v", got)
	}
	if len(h.sampled) != 0 {
		t.Errorf("the sampling hook ran %d times", len(h.sampled))
	}
}

func TestFilesystemStdio(t *testing.T) {
	node, mods := nodeServers(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, Options{}, Config{Name: "files", Command: node,
		Args: []string{filepath.Join(mods, "server-filesystem", "dist", "index.js"), dir}})
	tools, err := m.Tools(t.Context(), "files")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]ToolInfo{}
	for _, ti := range tools {
		have[ti.Tool] = ti
	}
	if !have["read_text_file"].Annotations.ReadOnly() || have["write_file"].Annotations.ReadOnly() || have["write_file"].Name != "files__write_file" {
		t.Errorf("annotations: read_text_file %+v, write_file %+v", have["read_text_file"].Annotations, have["write_file"])
	}
	list := mustCall(t, m, "files", "list_directory", fmt.Sprintf(`{"path":%q}`, dir))
	if !strings.Contains(list.Text, "[FILE] notes.txt") {
		t.Errorf("list_directory = %+v", list)
	}
	read := mustCall(t, m, "files", "read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt")))
	if strings.TrimSpace(read.Text) != "hello from a file" {
		t.Errorf("read_text_file = %+v", read)
	}
	outside := mustCall(t, m, "files", "read_text_file", `{"path":"/etc/passwd"}`)
	if !outside.IsError || !strings.Contains(outside.Text, "denied") {
		t.Errorf("reading outside the folder = %+v", outside)
	}
	// Through the agent.Tool adapter, as the core will call it.
	text, err := NewTool(m, have["read_text_file"], "").Call(t.Context(), agent.Agent{}, json.RawMessage(fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt"))))
	if err != nil || strings.TrimSpace(text) != "hello from a file" {
		t.Errorf("adapter: %q, %v", text, err)
	}
}

// startEverythingHTTP runs server-everything's Streamable HTTP mode on a
// free port and returns its endpoint.
func startEverythingHTTP(t *testing.T, node, mods string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(node, filepath.Join(mods, "server-everything", "dist", "index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	lines := make(chan string, 100)
	go func() { // ends when the server does
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		once := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				once()
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range lines {
		}
		_ = cmd.Wait()
	})
	select {
	case <-ready:
	case <-time.After(waitLimit):
		t.Fatal("server-everything (streamableHttp) did not say it listens")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}
