package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// rpc sends one modern-era request. caps are the client capabilities of
// this request; name goes in Mcp-Name.
func rpc(t *testing.T, url, token, method, name string, params map[string]any, caps map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks", "version": "0"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, out := send(t, req)
	text := string(out)
	if i := strings.LastIndex(text, "data: "); i >= 0 {
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var msg map[string]any
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		t.Fatalf("%s: reply %d is not JSON-RPC: %s", method, resp.StatusCode, out)
	}
	return resp.StatusCode, msg
}

var withTasks = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcpfill.TasksExtension: map[string]any{}}}

// pollTask polls tasks/get until the status is one of want.
func pollTask(t *testing.T, url, token, id string, want ...string) map[string]any {
	t.Helper()
	var r map[string]any
	waitUntil(t, 10*time.Second, fmt.Sprintf("task %s not %v", id, want), func() bool {
		_, msg := rpc(t, url, token, "tasks/get", id, map[string]any{"taskId": id}, withTasks)
		r = resultOf(t, msg)
		return slices.Contains(want, fmt.Sprint(r["status"]))
	})
	return r
}

func TestTaskLifecycle(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	alice, mallory := h.token("alice"), h.token("mallory")

	_, created := rpc(t, h.URL, alice, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": ollamatest.AskPrefix + "Colour?"}}, withTasks)
	c := resultOf(t, created)
	id, _ := c["taskId"].(string)
	if c["resultType"] != "task" || c["status"] != "working" || id == "" || c["createdAt"] == nil || c["ttlMs"] == nil {
		t.Fatalf("create result = %v", c)
	}
	for _, absent := range []string{"requestState", "result", "inputRequests", "task"} {
		if _, ok := c[absent]; ok {
			t.Errorf("create result carries %q", absent)
		}
	}

	waiting := pollTask(t, h.URL, alice, id, "input_required")
	reqs, _ := waiting["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("input_required without one input request: %v", waiting)
	}
	var qid string
	for k := range reqs {
		qid = k
	}
	if !strings.Contains(fmt.Sprint(reqs[qid]), "Colour?") || !strings.Contains(fmt.Sprint(reqs[qid]), "elicitation/create") {
		t.Errorf("input request = %v", reqs[qid])
	}
	if len(h.core.Questions().Pending()) != 1 || h.core.Questions().Pending()[0].ID != qid {
		t.Errorf("inputRequests are not keyed by question id")
	}

	// Another principal sees no such task.
	if status, msg := rpc(t, h.URL, mallory, "tasks/get", id, map[string]any{"taskId": id}, withTasks); status != 400 || errorCode(msg) != mcp.INVALID_PARAMS {
		t.Errorf("another principal's tasks/get: %d %v", status, msg)
	}
	// An answer that is not an answer is refused; the question stays open.
	bad := map[string]any{qid: map[string]any{"action": "accept", "content": map[string]any{"answer": 42}}}
	if _, msg := rpc(t, h.URL, alice, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": bad}, withTasks); errorCode(msg) != mcp.INVALID_PARAMS {
		t.Errorf("bad answer: %v", msg)
	}
	good := map[string]any{qid: map[string]any{"action": "accept", "content": map[string]any{"answer": "teal"}}}
	_, ack := rpc(t, h.URL, alice, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": good}, withTasks)
	if resultOf(t, ack)["resultType"] != "complete" {
		t.Errorf("update ack = %v", ack)
	}

	done := pollTask(t, h.URL, alice, id, "completed")
	res, _ := done["result"].(map[string]any)
	if res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), "You answered: teal") {
		t.Errorf("completed task = %v", done)
	}
	// Cancel on a finished task: the same empty ack, and it stays completed.
	_, cancelAck := rpc(t, h.URL, alice, "tasks/cancel", id, map[string]any{"taskId": id}, withTasks)
	if r := resultOf(t, cancelAck); r["resultType"] != "complete" || r["taskId"] != nil {
		t.Errorf("cancel ack = %v", r)
	}
	if r := pollTask(t, h.URL, alice, id, "completed", "cancelled"); r["status"] != "completed" {
		t.Errorf("a finished task changed to %v", r["status"])
	}
	if n := len(h.ollama.ChatRequests()); n != 2 {
		t.Errorf("Ollama served %d chats, want 2", n)
	}
}

func TestTaskCancelAndErrors(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(200*time.Millisecond))
	token := h.token("alice")
	_, created := rpc(t, h.URL, token, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": "a long answer please"}}, withTasks)
	id := resultOf(t, created)["taskId"].(string)
	_, ack := rpc(t, h.URL, token, "tasks/cancel", id, map[string]any{"taskId": id}, withTasks)
	if resultOf(t, ack)["resultType"] != "complete" {
		t.Errorf("cancel ack = %v", ack)
	}
	pollTask(t, h.URL, token, id, "cancelled")

	// A tool error is completed with isError, not failed.
	_, created = rpc(t, h.URL, token, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": 7}}, withTasks)
	bad := pollTask(t, h.URL, token, resultOf(t, created)["taskId"].(string), "completed", "failed")
	if res, _ := bad["result"].(map[string]any); bad["status"] != "completed" || res["isError"] != true {
		t.Errorf("tool error task = %v", bad)
	}

	cases := []struct {
		name, method, header string
		params               map[string]any
		caps                 map[string]any
		code                 int
	}{
		{"unknown task", "tasks/get", "nope", map[string]any{"taskId": "nope"}, withTasks, mcp.INVALID_PARAMS},
		{"cancel unknown task", "tasks/cancel", "nope", map[string]any{"taskId": "nope"}, withTasks, mcp.INVALID_PARAMS},
		{"extension not declared", "tasks/get", id, map[string]any{"taskId": id}, map[string]any{}, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY},
		{"Mcp-Name is not the taskId", "tasks/get", "other", map[string]any{"taskId": id}, withTasks, mcp.HEADER_MISMATCH},
		{"Mcp-Name is not the tool", "tools/call", "other", map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}}, withTasks, mcp.HEADER_MISMATCH},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, msg := rpc(t, h.URL, token, c.method, c.header, c.params, c.caps); errorCode(msg) != float64(c.code) {
				t.Errorf("got %v, want code %d", msg, c.code)
			}
		})
	}

	// Without the extension, a call is an ordinary call.
	_, plain := rpc(t, h.URL, token, "tools/call", "assistant", map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}}, map[string]any{})
	if r := resultOf(t, plain); r["resultType"] == "task" || r["content"] == nil {
		t.Errorf("call without the extension = %v", r)
	}
}

func TestTasksExtensionAdvertised(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	_, msg := rpc(t, h.URL, h.token("alice"), "server/discover", "", map[string]any{}, map[string]any{})
	caps, _ := resultOf(t, msg)["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if ext[mcpfill.TasksExtension] == nil {
		t.Errorf("capabilities = %v", caps)
	}
}

// TestTaskWithoutElicitation: a client that cannot answer sees the task
// working, with a status message saying the desktop is asked; the desktop
// answers.
func TestTaskWithoutElicitation(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("alice")
	tasksOnly := map[string]any{"extensions": map[string]any{mcpfill.TasksExtension: map[string]any{}}}
	_, created := rpc(t, h.URL, token, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": ollamatest.AskPrefix + "Which day?"}}, tasksOnly)
	id := resultOf(t, created)["taskId"].(string)
	var got map[string]any
	get := func() {
		_, msg := rpc(t, h.URL, token, "tasks/get", id, map[string]any{"taskId": id}, tasksOnly)
		got = resultOf(t, msg)
	}
	// A client learns of a task's progress only by polling it.
	waitUntil(t, 10*time.Second, "the task never said what it waits for", func() bool { get(); return got["statusMessage"] != nil })
	if got["status"] != "working" || !strings.Contains(fmt.Sprint(got["statusMessage"]), "Which day?") || got["inputRequests"] != nil {
		t.Fatalf("task while the desktop is asked = %v", got)
	}
	if err := h.core.Questions().Answer(h.core.Questions().Pending()[0].ID, map[string]any{"answer": "Monday"}, false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the task did not complete", func() bool { get(); return got["status"] == "completed" })
	if !strings.Contains(fmt.Sprint(got["result"]), "You answered: Monday") {
		t.Errorf("task after the desktop answered = %v", got)
	}
}
