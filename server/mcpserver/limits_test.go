package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
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
	if got := len(h.core.Questions().Pending()); got != mcpserver.DefaultMaxPaused {
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

// initialize opens a 2025-11-25 session; it returns the session id ("" if
// refused) and the reply.
func initialize(t *testing.T, url, token string) (string, string) {
	t.Helper()
	resp, err := post(t.Context(), url, token, mcp.ProtocolVersion20251125, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	return resp.Header.Get("Mcp-Session-Id"), string(body)
}

func deleteSession(t *testing.T, url, token, sid string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, body := send(t, req); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %s %s", resp.Status, body)
	}
}

// TestLegacySessionLimits: a client past its share of sessions, and any
// client past the total, is refused an initialize with a JSON-RPC error
// naming the limit and saying what to do; other clients still initialize,
// and a DELETE frees a place.
func TestLegacySessionLimits(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{MaxSessions: 3, MaxSessionsPerClient: 2})
	a, b, c := h.token("a"), h.token("b"), h.token("c")
	var mine []string
	for range 2 {
		sid, body := initialize(t, h.URL, a)
		if sid == "" {
			t.Fatalf("a's session: %s", body)
		}
		mine = append(mine, sid)
	}
	share := "This client already has 2 open MCP sessions, the most one client may hold. Close unused sessions (DELETE /mcp"
	if sid, body := initialize(t, h.URL, a); sid != "" || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, share) {
		t.Errorf("a's third session: %q %s", sid, body)
	}
	// The message reaches a client's user as it is.
	tr, err := transport.NewStreamableHTTP(h.URL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + a}))
	if err != nil {
		t.Fatal(err)
	}
	mc := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	defer mc.Close()
	if err := mc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	if _, err := mc.Initialize(t.Context(), init); err == nil || !strings.Contains(err.Error(), share) {
		t.Errorf("mcp-go client's initialize: %v", err)
	}

	// Another client still initializes; then the total is reached.
	if sid, body := initialize(t, h.URL, b); sid == "" {
		t.Fatalf("b's session: %s", body)
	}
	if sid, body := initialize(t, h.URL, c); sid != "" || !strings.Contains(body, "Deskhand already holds 3 MCP sessions, its limit for all clients together") {
		t.Errorf("c's session over the total: %q %s", sid, body)
	}
	// A DELETE frees a place, for that client as for the others.
	deleteSession(t, h.URL, a, mine[0])
	if sid, body := initialize(t, h.URL, a); sid == "" {
		t.Errorf("a's session after a DELETE: %s", body)
	}
	// An ended session is gone, for streams too (mcp-go would open one).
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.URL, nil)
	req.Header.Set("Authorization", "Bearer "+a)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	req.Header.Set("Mcp-Session-Id", mine[0])
	if resp, _ := send(t, req); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET on a deleted session: %s", resp.Status)
	}
}

// TestIdleSessionIsForgotten: a session idle past SessionIdleTTL ends, and
// with it all Deskhand held for it (its conversation, its place among the
// client's sessions).
func TestIdleSessionIsForgotten(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{SessionIdleTTL: 2 * time.Second, MaxSessionsPerClient: 1})
	ended := make(chan string, 4)
	h.srv.OnSessionEnd(func(sid string) { ended <- sid })
	token := h.token("idler")
	sid := legacySession(t, h.URL, token)
	resp, err := post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"remember me"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "remember me") {
		t.Fatalf("call: %s", body)
	}
	if live, convs, _, _ := h.srv.SessionState(); live != 1 || convs != 1 {
		t.Fatalf("before the TTL: %d sessions, %d with a conversation", live, convs)
	}
	if other, body := initialize(t, h.URL, token); other != "" || !strings.Contains(body, "1 open MCP sessions") {
		t.Fatalf("a second session within the share of 1: %q %s", other, body)
	}

	select {
	case got := <-ended:
		if got != sid {
			t.Fatalf("session %s ended, want %s", got, sid)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the idle session did not end")
	}
	if live, convs, listeners, calls := h.srv.SessionState(); live+convs+listeners+calls != 0 {
		t.Errorf("after the TTL: %d sessions, %d conversations, %d streams, %d calls held", live, convs, listeners, calls)
	}
	resp, err = post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the ended session still answers: %s", resp.Status)
	}
	if again, body := initialize(t, h.URL, token); again == "" {
		t.Errorf("no new session once the idle one ended: %s", body)
	}
}

// TestSessionEndedMidCallKeepsNothing: a session closed while one of its
// calls runs leaves nothing behind once the call ends (the conversation
// the call would have noted for it included).
func TestSessionEndedMidCallKeepsNothing(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(50*time.Millisecond))
	token := h.token("leaver")
	sid := legacySession(t, h.URL, token)
	events := h.core.Events().Subscribe(t.Context(), agent.EventTurnStarted)
	answered := make(chan string, 1)
	go func() {
		resp, err := post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"a slow one"}}}`)
		if err != nil {
			answered <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(body)
	}()
	select {
	case <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("the call's turn did not start")
	}
	deleteSession(t, h.URL, token, sid)
	if got := <-answered; !strings.Contains(got, "a slow one") {
		t.Fatalf("the call: %s", got)
	}
	if live, convs, listeners, calls := h.srv.SessionState(); live+convs+listeners+calls != 0 {
		t.Errorf("after the session ended: %d sessions, %d conversations, %d streams, %d calls held", live, convs, listeners, calls)
	}
}

// TestFinishedTasksAreCapped: finished tasks are kept within a per-client
// share and a total. Past its share a client's oldest finished task goes;
// past the total, the oldest of the client holding the most, never one of
// a client within its share. A tasks/get of a dropped task says so and
// names the limit (to its own client; to another it is unknown, as any
// task of another's is); unfinished tasks are never dropped.
func TestFinishedTasksAreCapped(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{MaxFinishedTasks: 4, MaxFinishedTasksPerClient: 2})
	finished := make(chan string, 16)
	h.srv.OnTaskFinished(func(id string) { finished <- id })
	a, b, c := h.token("a"), h.token("b"), h.token("c")

	// failing starts a task that fails at once (its arguments are wrong)
	// and waits until it is finished.
	failing := func(token string) string {
		t.Helper()
		_, msg := rpc(t, h.URL, token, "tools/call", "assistant", map[string]any{"name": "assistant", "arguments": map[string]any{"message": 7}}, withTasks)
		id, _ := resultOf(t, msg)["taskId"].(string)
		if id == "" {
			t.Fatalf("a task call: %v", msg)
		}
		select {
		case got := <-finished:
			if got != id {
				t.Fatalf("task %s finished, want %s", got, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("task %s did not finish", id)
		}
		return id
	}
	kept := func(token, id string) {
		t.Helper()
		_, msg := rpc(t, h.URL, token, "tasks/get", id, map[string]any{"taskId": id}, withTasks)
		if r, _ := msg["result"].(map[string]any); r["status"] != "completed" || !strings.Contains(fmt.Sprint(r["result"]), "isError:true") {
			t.Errorf("task %s: %v, want it completed with its tool error", id, msg)
		}
	}
	dropped := func(token, id, want, limit string) {
		t.Helper()
		status, msg := rpc(t, h.URL, token, "tasks/get", id, map[string]any{"taskId": id}, withTasks)
		e, _ := msg["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		if status != http.StatusBadRequest || errorCode(msg) != mcp.INVALID_PARAMS || !strings.Contains(fmt.Sprint(e["message"]), want) || data["limit"] != limit {
			t.Errorf("tasks/get of dropped task %s: %d %v, want -32602 saying %q, limit %q", id, status, msg, want, limit)
		}
	}

	// An unfinished task of a is never dropped.
	_, msg := rpc(t, h.URL, a, "tools/call", "assistant", map[string]any{"name": "assistant",
		"arguments": map[string]any{"message": ollamatest.AskPrefix + "Colour?"}}, withTasks)
	waiting, _ := resultOf(t, msg)["taskId"].(string)
	pollTask(t, h.URL, a, waiting, "input_required")

	a1, a2 := failing(a), failing(a)
	kept(a, a1)
	kept(a, a2)
	a3 := failing(a) // over a's share of 2: a1 goes
	dropped(a, a1, "was dropped to stay within the limit on finished tasks (Deskhand keeps at most 2 finished tasks for each client", "finished tasks per client")
	kept(a, a2)
	kept(a, a3)
	// To another client a dropped task is unknown, like any of a's.
	if _, msg := rpc(t, h.URL, b, "tasks/get", a1, map[string]any{"taskId": a1}, withTasks); !strings.Contains(fmt.Sprint(msg["error"]), fmt.Sprintf("no task %q", a1)) {
		t.Errorf("b's tasks/get of a's dropped task: %v", msg)
	}

	// b fills the total; c's first finished task is over it: the oldest of
	// the clients holding the most (a and b, two each) goes, a2.
	b1, b2 := failing(b), failing(b)
	c1 := failing(c)
	dropped(a, a2, "Deskhand keeps at most 4 finished tasks for all clients together", "finished tasks")
	kept(a, a3)
	kept(b, b1)
	kept(b, b2)
	kept(c, c1)

	// Through all of it a's unfinished task waited, and still finishes.
	r := pollTask(t, h.URL, a, waiting, "input_required")
	var qid string
	for k := range r["inputRequests"].(map[string]any) {
		qid = k
	}
	good := map[string]any{qid: map[string]any{"action": "accept", "content": map[string]any{"answer": "teal"}}}
	rpc(t, h.URL, a, "tasks/update", waiting, map[string]any{"taskId": waiting, "inputResponses": good}, withTasks)
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("a's waiting task did not finish")
	}
	if r := pollTask(t, h.URL, a, waiting, "completed"); !strings.Contains(fmt.Sprint(r["result"]), "You answered: teal") {
		t.Errorf("a's waiting task: %v", r)
	}
	// It is a fifth finished task: a and b hold two each, and a3 is the
	// older of their oldest.
	dropped(a, a3, "at most 4 finished tasks for all clients together", "finished tasks")
	kept(b, b1)
	kept(c, c1)
}
