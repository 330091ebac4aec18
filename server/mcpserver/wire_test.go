package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// modernMeta is the _meta a sessionless 2026-07-28 request carries.
const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}`

// toolCall is a raw tools/call of the era; meta goes into _meta as it is.
func toolCall(era string, id int, tool, args, meta string) string {
	if era == mcp.ProtocolVersion20260728 {
		meta = strings.Join([]string{meta, modernMeta}, ",")
		meta = strings.TrimPrefix(meta, ",")
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, id, tool, args, meta)
}

// rpcAnswer is a JSON-RPC answer with the events that came before it.
type rpcAnswer struct {
	status int
	before []string // the data of the events ahead of the answer
	ID     json.RawMessage
	Result *mcp.CallToolResult
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

// answerOf reads the answer to request id from a response, plain JSON or an
// event stream, and closes the body.
func answerOf(t *testing.T, resp *http.Response, id int) rpcAnswer {
	t.Helper()
	a, err := parseAnswer(resp, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// parseAnswer is answerOf for any goroutine: it fails when no answer comes
// within wait.
func parseAnswer(resp *http.Response, id int, wait time.Duration) (rpcAnswer, error) {
	defer resp.Body.Close()
	a := rpcAnswer{status: resp.StatusCode}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return a, err
		}
		if err := json.Unmarshal(body, &a); err != nil {
			return a, fmt.Errorf("%s: %q is not a JSON-RPC answer", resp.Status, body)
		}
		return a, nil
	}
	events := readEvents(resp.Body)
	timeout := time.After(wait)
	for {
		var ev sseEvent
		select {
		case e, ok := <-events:
			if !ok {
				return a, fmt.Errorf("the stream ended without answering %d; before: %q", id, a.before)
			}
			ev = e
		case <-timeout:
			return a, fmt.Errorf("no answer to %d within %s", id, wait)
		}
		if ev.data == "" {
			continue
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(ev.data), &msg) == nil && string(msg.ID) == fmt.Sprint(id) {
			if err := json.Unmarshal([]byte(ev.data), &a); err != nil {
				return a, fmt.Errorf("answer %q: %w", ev.data, err)
			}
			return a, nil
		}
		a.before = append(a.before, ev.data)
	}
}

// trickle sends a POST's headers and part of its body, then nothing, and
// returns the response the server gives, or an error when none comes
// within 10 s.
func trickle(t *testing.T, h *harness, token string, chunked bool) (*http.Response, string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", h.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	framing, part := "Content-Length: 4096", `{"jsonrpc":"2.0","id":1,"method":"tools/list"`
	if chunked {
		framing, part = "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s", 4096, part)
	}
	head := "POST " + mcpserver.EndpointPath + " HTTP/1.1\r\nHost: " + h.http.Listener.Addr().String() +
		"\r\nAuthorization: Bearer " + token + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Protocol-Version: 2025-11-25\r\n" + framing + "\r\n\r\n"
	if _, err := io.WriteString(conn, head+part); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, "", fmt.Errorf("no answer to a body that stopped coming: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body), nil
}

// TestSlowBodyTimesOut: a client with a valid token that sends its
// headers and part of its body, then stops, gets 408 once BodyTimeout has
// passed, and the request slot it held is free again (issue 12).
func TestSlowBodyTimesOut(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{BodyTimeout: 200 * time.Millisecond, MaxInFlight: 1})
	token := h.token("slow")
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			resp, body, err := trickle(t, h, token, chunked)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive within 200ms") {
				t.Errorf("a stalled body got %s %q, want 408 saying what happened", resp.Status, body)
			}
			// The only slot is free: a whole request goes through.
			req := rawRequest(t, h.URL, mcp.ProtocolVersion20251125)
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, body := send(t, req); resp.StatusCode != http.StatusOK {
				t.Errorf("after the timeout: %s %s", resp.Status, body)
			}
		})
	}
}

// TestBodyTimeoutSparesLongStreams: the body deadline ends with the body.
// Streams that outlive it by far (a call of each era waiting on a person,
// a subscriptions/listen stream) go on, and deliver, after a stalled body
// sent later has been timed out.
func TestBodyTimeoutSparesLongStreams(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{BodyTimeout: 200 * time.Millisecond})
	token := h.token("patient")
	sid := legacySession(t, h.URL, token)
	asked := h.core.Events().Subscribe(t.Context(), agent.EventQuestionAsked)

	listen, err := post(t.Context(), h.URL, token, "2026-07-28", "",
		`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{`+modernMeta+`}}}`)
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Body.Close()
	notes := readEvents(listen.Body)
	if ack := next(t, notes); !strings.Contains(ack.data, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first on the listen stream: %+v", ack)
	}

	type answer struct {
		era string
		a   rpcAnswer
		err error
	}
	answers := make(chan answer, len(eras))
	for i, era := range eras {
		session := ""
		if era == mcp.ProtocolVersion20251125 {
			session = sid
		}
		resp, err := post(t.Context(), h.URL, token, era, session, toolCall(era, 40+i, "assistant", `{"message":"ask: Ready?"}`, `"progressToken":"w"`))
		if err != nil {
			t.Fatal(err)
		}
		// The answer comes once the question is answered, below.
		go func() {
			a, err := parseAnswer(resp, 40+i, 20*time.Second)
			answers <- answer{era, a, err}
		}()
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the call never asked its question", era)
		}
	}

	// A body that stalls now is timed out: the deadline, had it stayed on
	// the streams above, has passed for them too.
	if resp, body, err := trickle(t, h, token, false); err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled body: %v %v %q", err, resp, body)
	}

	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Name: "Late", Slug: "late", Backend: agent.BackendOllama, Model: "m", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, notes); !strings.Contains(ev.data, "notifications/tools/list_changed") {
		t.Errorf("the listen stream got %+v, want list_changed", ev)
	}
	for _, q := range h.core.Questions().Pending() {
		if err := h.core.Questions().Answer(q.ID, map[string]any{"answer": "yes"}, false); err != nil {
			t.Fatal(err)
		}
	}
	for range eras {
		select {
		case got := <-answers:
			if got.err != nil {
				t.Errorf("%s: %v", got.era, got.err)
			} else if got.a.Result == nil || got.a.Result.IsError || !strings.Contains(firstText(got.a.Result), "You answered: yes") {
				t.Errorf("%s: the waiting call answered %d %+v %+v", got.era, got.a.status, got.a.Error, got.a.Result)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting call never answered")
		}
	}
}

// TestProgressTokenSize: a tools/call whose progress token is over
// MaxProgressTokenBytes of JSON is refused with -32602 before any work, on
// both eras, and memory stays flat however often it comes (issue 12: a 3
// MiB token, copied into every kept event, took the process from 76 MiB
// to 1.3 GiB in three calls); a token of exactly the limit still works.
func TestProgressTokenSize(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("tokens")
	sid := legacySession(t, h.URL, token)
	huge := `"progressToken":"` + strings.Repeat("x", 3<<20) + `"`
	fits := `"progressToken":"` + strings.Repeat("y", mcpfill.MaxProgressTokenBytes-2) + `"`
	// Three calls, as in the issue. The heap may grow by less than one
	// copy of the token; before the fix, the legacy era's grew by 3.3 MiB
	// a call (the copies its stream kept).
	const calls, bound = 3, 2 << 20
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			session := ""
			if era == mcp.ProtocolVersion20251125 {
				session = sid
			}
			chats := len(h.ollama.ChatRequests())
			// The bodies exist before the heap is measured: the HTTP
			// client may still hold the last one when it is measured again.
			bodies := make([]string, calls)
			for i := range bodies {
				bodies[i] = toolCall(era, 10+i, "assistant", `{"message":"hi"}`, huge)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i, body := range bodies {
				resp, err := post(t.Context(), h.URL, token, era, session, body)
				if err != nil {
					t.Fatal(err)
				}
				a := answerOf(t, resp, 10+i)
				if a.Error == nil || a.Error.Code != mcp.INVALID_PARAMS || !strings.Contains(a.Error.Message, "256 bytes") {
					t.Fatalf("call %d with a 3 MiB progress token: %d %+v %+v, want -32602 naming the 256-byte limit", i, a.status, a.Error, a.Result)
				}
				if string(a.ID) != fmt.Sprint(10+i) {
					t.Errorf("the refusal answers id %s, want %d", a.ID, 10+i)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > bound {
				t.Errorf("the heap grew by %d KiB over %d refused calls", grew>>10, calls)
			}
			if n := len(h.ollama.ChatRequests()) - chats; n != 0 {
				t.Errorf("the model was asked %d times for refused calls", n)
			}

			resp, err := post(t.Context(), h.URL, token, era, session, toolCall(era, 30, "assistant", `{"message":"hi"}`, fits))
			if err != nil {
				t.Fatal(err)
			}
			a := answerOf(t, resp, 30)
			if a.Error != nil || a.Result == nil || a.Result.IsError {
				t.Fatalf("a %d-byte token: %+v %+v", mcpfill.MaxProgressTokenBytes, a.Error, a.Result)
			}
			if len(a.before) == 0 || !strings.Contains(strings.Join(a.before, ""), strings.Repeat("y", mcpfill.MaxProgressTokenBytes-2)) {
				t.Errorf("no progress carried the token: %q", a.before)
			}
		})
	}
}

// TestKeptStreamsAreCapped: resumable streams keep at most
// KeptStreamBytes each and, for one client, DefaultMaxKeptBytesPerClient
// in all, however large and many their events, the oldest going first;
// resuming from a dropped event gets 410 Gone at once, and from a kept one
// the rest and the answer.
func TestKeptStreamsAreCapped(t *testing.T) {
	const calls, each, size = 24, 4, 300 << 10 // 28 MiB of events
	var h *harness
	flood := server.ServerTool{
		Tool: mcp.NewTool("flood", mcp.WithDescription("sends large progress, then answers")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range each {
				if err := h.srv.Notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "message": strings.Repeat("z", size)}); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
			}
			return mcp.NewToolResultText("flooded"), nil
		},
	}
	h = newHarnessWith(t, mcpserver.Options{ExtraTools: []server.ServerTool{flood}})
	token := h.token("flooder")
	sid := legacySession(t, h.URL, token)

	type stream struct{ priming, last string }
	var streams []stream
	for i := range calls {
		resp, err := post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid,
			toolCall(mcp.ProtocolVersion20251125, 100+i, "flood", `{}`, `"progressToken":"f"`))
		if err != nil {
			t.Fatal(err)
		}
		var s stream
		for ev := range readEvents(resp.Body) {
			if s.priming == "" {
				s.priming = ev.id
			}
			if strings.Contains(ev.data, "notifications/progress") {
				s.last = ev.id
			}
		}
		resp.Body.Close()
		if s.priming == "" || s.last == "" {
			t.Fatalf("call %d: no priming or progress event", i)
		}
		streams = append(streams, s)
		total, largest := h.srv.KeptBytes()
		if total > mcpserver.DefaultMaxKeptBytesPerClient || largest > mcpfill.KeptStreamBytes {
			t.Fatalf("after %d calls the streams keep %d bytes, one %d: over the caps %d and %d",
				i+1, total, largest, mcpserver.DefaultMaxKeptBytesPerClient, mcpfill.KeptStreamBytes)
		}
	}
	if total, _ := h.srv.KeptBytes(); total < mcpserver.DefaultMaxKeptBytesPerClient/2 {
		t.Errorf("the streams keep %d bytes: the client's share is %d, and far more was sent", total, mcpserver.DefaultMaxKeptBytesPerClient)
	}

	// The first call's stream was dropped to make room: a clear 410.
	gone := resumeRequest(t, h.URL, token, sid, streams[0].priming)
	if resp, body := send(t, gone); resp.StatusCode != http.StatusGone || !strings.Contains(string(body), "no longer kept") || !strings.Contains(string(body), "4 MiB for each client") {
		t.Errorf("resuming a dropped stream: %s %q, want 410 saying the events are no longer kept", resp.Status, body)
	}
	// So does an id of ours for a stream not kept (expired), at once,
	// where mcp-go's GET stream would have waited for nothing.
	never := resumeRequest(t, h.URL, token, sid, strings.Repeat("A", 26)+".3")
	if resp, body := send(t, never); resp.StatusCode != http.StatusGone {
		t.Errorf("resuming a stream never kept: %s %q, want 410", resp.Status, body)
	}
	// The last call's first progress went to fit its stream in its cap.
	last := streams[len(streams)-1]
	if resp, body := send(t, resumeRequest(t, h.URL, token, sid, last.priming)); resp.StatusCode != http.StatusGone || !strings.Contains(string(body), "dropped to stay within the limit of 1 MiB of events a call") {
		t.Errorf("resuming before a dropped event: %s %q, want 410 naming the limit", resp.Status, body)
	}
	var got []sseEvent
	for _, ev := range resumeFrom(t, h.URL, token, sid, last.last) {
		if ev.data != "" {
			got = append(got, ev)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].data, "flooded") {
		t.Errorf("resuming after the last progress got %+v, want the answer alone", got)
	}
}

// resumeRequest is a GET carrying Last-Event-ID on a 2025-11-25 session.
func resumeRequest(t *testing.T, url, token, sid, lastID string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Accept": "text/event-stream",
		"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sid, "Last-Event-ID": lastID} {
		req.Header.Set(k, v)
	}
	return req
}

// TestDuplicateArgumentKeysRefused: a tools/call whose arguments give a key
// twice, at the top or deeper, is a tool error that names the key, on both
// eras; the agent never runs.
func TestDuplicateArgumentKeysRefused(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("alice")
	for _, era := range eras {
		session := ""
		if era == mcp.ProtocolVersion20251125 {
			session = legacySession(t, h.URL, token)
		}
		for _, args := range []string{`{"message":"a","message":"b"}`, `{"message":"a","extra":{"k":1,"k":2}}`} {
			_, _, got := rawAnswer(t, h.URL, token, era, session, toolCall(era, 8, "assistant", args, ""))
			var answer struct{ Result *mcp.CallToolResult }
			if err := json.Unmarshal(got, &answer); err != nil || answer.Result == nil || !answer.Result.IsError ||
				!strings.Contains(firstText(answer.Result), "is given twice") {
				t.Errorf("%s %s: %s", era, args, got)
			}
		}
	}
	if n := len(h.ollama.ChatRequests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}
