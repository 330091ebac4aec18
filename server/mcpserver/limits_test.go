package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// parkTurn makes a 2026-07-28 call whose turn asks, and returns the reply.
func parkTurn(t *testing.T, url, token string) map[string]any {
	t.Helper()
	_, msg := rawCall(t, url, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": ollamatest.AskPrefix + "Colour?"}})
	return resultOf(t, msg)
}

// taskCall makes a 2026-07-28 call that declares the Tasks extension.
func taskCall(t *testing.T, url, token string) map[string]any {
	t.Helper()
	_, msg := rpc(t, url, token, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": ollamatest.AskPrefix + "Colour?"}}, withTasks)
	return resultOf(t, msg)
}

// refusedWith checks that a call was refused with a tool error saying want.
func refusedWith(t *testing.T, what string, r map[string]any, want string) {
	t.Helper()
	if r["isError"] != true || r["taskId"] != nil || r["resultType"] != "complete" || !strings.Contains(fmt.Sprint(r["content"]), want) {
		t.Errorf("%s: got %v, want a tool error saying %q", what, r, want)
	}
}

// TestPausedTurnsAndTasksShareOneCap: calls paused on a question and
// unfinished tasks are held under one cap (256) with a per-client share
// (64). Past either, a call is refused with a tool error naming the limit,
// a task call with the same tool error instead of a task, and no waiting
// turn is evicted.
func TestPausedTurnsAndTasksShareOneCap(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	tokens := []string{h.token("a"), h.token("b"), h.token("c"), h.token("d")}
	a := tokens[0]

	// One token takes its whole share, with paused calls and a task.
	first := parkTurn(t, h.URL, a)
	if first["resultType"] != "input_required" {
		t.Fatalf("first paused call: %v", first)
	}
	task := taskCall(t, h.URL, a)
	taskID, _ := task["taskId"].(string)
	if taskID == "" {
		t.Fatalf("task call: %v", task)
	}
	pollTask(t, h.URL, a, taskID, "input_required")
	for i := 2; i < mcpserver.DefaultMaxPausedPerClient; i++ {
		if r := parkTurn(t, h.URL, a); r["resultType"] != "input_required" {
			t.Fatalf("paused call %d of a: %v", i+1, r)
		}
	}
	share := fmt.Sprintf("This client already has %d turns held for it", mcpserver.DefaultMaxPausedPerClient)
	refusedWith(t, "a's next paused call", parkTurn(t, h.URL, a), share)
	refusedWith(t, "a's next task", taskCall(t, h.URL, a), share)

	// That leaves the others their own: they fill the rest.
	for _, token := range tokens[1:] {
		for i := range mcpserver.DefaultMaxPausedPerClient {
			if r := parkTurn(t, h.URL, token); r["resultType"] != "input_required" {
				t.Fatalf("paused call %d of another client: %v", i+1, r)
			}
		}
	}
	// Now all 256 are held: a fifth client's calls and tasks are refused.
	e := h.token("e")
	total := fmt.Sprintf("already holding %d turns", mcpserver.DefaultMaxPaused)
	refusedWith(t, "257th paused call", parkTurn(t, h.URL, e), total)
	refusedWith(t, "task call over the total", taskCall(t, h.URL, e), total)
	if got := len(h.core.Pending()); got != mcpserver.DefaultMaxPaused {
		t.Errorf("%d questions on the desktop, want %d: a refused turn left one, or a waiting one was evicted", got, mcpserver.DefaultMaxPaused)
	}

	// Nothing was evicted: a's first paused turn and its task still finish.
	_, done := rawCall(t, h.URL, a, map[string]any{"name": "assistant", "arguments": map[string]any{"message": ollamatest.AskPrefix + "Colour?"},
		"requestState": first["requestState"], "inputResponses": answer("teal")})
	if r := resultOf(t, done); r["isError"] == true || !strings.Contains(fmt.Sprint(r["content"]), "You answered: teal") {
		t.Errorf("a's first paused turn: %v", r)
	}
	waiting := pollTask(t, h.URL, a, taskID, "input_required")
	var qid string
	for k := range waiting["inputRequests"].(map[string]any) {
		qid = k
	}
	good := map[string]any{qid: map[string]any{"action": "accept", "content": map[string]any{"answer": "plum"}}}
	rpc(t, h.URL, a, "tasks/update", taskID, map[string]any{"taskId": taskID, "inputResponses": good}, withTasks)
	if r := pollTask(t, h.URL, a, taskID, "completed"); !strings.Contains(fmt.Sprint(r["result"]), "You answered: plum") {
		t.Errorf("a's task: %v", r)
	}
	// Two places are free again: a task of the fifth client gets one.
	if r := taskCall(t, h.URL, e); r["resultType"] != "task" {
		t.Errorf("a task once places are free: %v", r)
	}
}

// TestOneClientCannotTakeEveryStream: one token opening stream after
// stream (GET /mcp on its session, subscriptions/listen) gets its share and
// then 429 naming the per-client limit, while another token is still
// served; every stream ends when closed, leaving no goroutine behind.
func TestOneClientCannotTakeEveryStream(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	a, b := h.token("a"), h.token("b")
	sid := legacySession(t, h.URL, a)
	ignore := goleak.IgnoreCurrent()

	ctx, closeStreams := context.WithCancel(t.Context())
	defer closeStreams()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	open := func(token string, i int) *http.Response {
		t.Helper()
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
			req.Header.Set("Mcp-Session-Id", sid)
		} else {
			params, _ := json.Marshal(map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{},
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "listener", "version": "0"},
			}})
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":%s}`, i, params)
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range mcp.StandardHeaders(mcp.ProtocolVersion20260728, mcp.MethodSubscriptionsListen, params) {
				req.Header.Set(k, v)
			}
			req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		return resp
	}
	share := fmt.Sprintf("Too many open streams for this client: %d at once", mcpserver.DefaultMaxStreamsPerClient)
	refused := func(what string, resp *http.Response) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), share) {
			t.Errorf("%s: %s %q, want 429 with Retry-After saying %q", what, resp.Status, body, share)
		}
	}

	var streams []*http.Response
	for i := range 256 {
		resp := open(a, i)
		if resp.StatusCode == http.StatusOK {
			streams = append(streams, resp)
			continue
		}
		refused(fmt.Sprintf("a's stream %d", i+1), resp)
	}
	if len(streams) != mcpserver.DefaultMaxStreamsPerClient {
		t.Errorf("a opened %d of 256 streams, want its share of %d", len(streams), mcpserver.DefaultMaxStreamsPerClient)
	}

	// Another client is still served: a call, and a stream of its own.
	_, msg := rawCall(t, h.URL, b, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "still there?"}})
	if r := resultOf(t, msg); r["isError"] == true || !strings.Contains(fmt.Sprint(r["content"]), "still there?") {
		t.Errorf("b's call while a holds its streams: %v", r)
	}
	if resp := open(b, 1); resp.StatusCode != http.StatusOK {
		t.Errorf("b's stream: %s", resp.Status)
	} else {
		streams = append(streams, resp)
	}
	refused("a's next stream", open(a, 0))

	closeStreams()
	for _, resp := range streams {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	hc.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, ignore, goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}
