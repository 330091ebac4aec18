package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// sseEvent is one server-sent event.
type sseEvent struct{ id, retry, data string }

// readEvents reads events from an SSE body onto a channel, closed at its end.
func readEvents(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev sseEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if seen {
					out <- ev
				}
				ev, seen = sseEvent{}, false
			case strings.HasPrefix(line, "id: "):
				ev.id, seen = strings.TrimPrefix(line, "id: "), true
			case strings.HasPrefix(line, "retry: "):
				ev.retry, seen = strings.TrimPrefix(line, "retry: "), true
			case strings.HasPrefix(line, "data: "), line == "data:":
				ev.data, seen = strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "), true
			}
		}
	}()
	return out
}

// next takes the next event, failing after a while.
func next(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}
}

// legacySession opens a 2025-11-25 session with raw requests.
func legacySession(t *testing.T, url, token string) string {
	t.Helper()
	resp, err := post(t.Context(), url, token, "2025-11-25", "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp, err := post(t.Context(), url, token, "2025-11-25", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
		resp.Body.Close()
	}
	return sid
}

// resumeFrom reconnects with Last-Event-ID and returns the events it gets
// until the call's answer (id 5).
func resumeFrom(t *testing.T, url, token, sid, lastID string) []sseEvent {
	t.Helper()
	resp, err := http.DefaultClient.Do(resumeRequest(t, url, token, sid, lastID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %s", resp.Status)
	}
	var got []sseEvent
	timeout := time.After(10 * time.Second)
	events := readEvents(resp.Body)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("no answer after resuming; got %+v", got)
		}
	}
}

// TestResumeAfterTheStreamDrops: a 2025-11-25 call's stream opens with a
// priming event, numbers its events, and when the client loses it, a GET
// with Last-Event-ID brings the rest, the answer included, once.
func TestResumeAfterTheStreamDrops(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(100*time.Millisecond))
	token := h.token("resumer")
	sid := legacySession(t, h.URL, token)
	ctx, drop := context.WithCancel(t.Context())
	resp, err := post(ctx, h.URL, token, "2025-11-25", sid,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"one two three four"},"_meta":{"progressToken":"p"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	events := readEvents(resp.Body)
	priming := next(t, events)
	if priming.id == "" || priming.retry == "" || priming.data != "" {
		t.Fatalf("first event %+v, want a priming event (id, retry, no data)", priming)
	}
	progress := next(t, events)
	if progress.id == "" || !strings.Contains(progress.data, "notifications/progress") {
		t.Fatalf("second event %+v, want the progress with an id", progress)
	}
	drop() // the client loses the stream mid-call
	resp.Body.Close()

	got := resumeFrom(t, h.URL, token, sid, progress.id)
	if len(got) == 0 || !strings.Contains(got[len(got)-1].data, `"id":5`) || !strings.Contains(got[len(got)-1].data, `"result"`) {
		t.Fatalf("resumed events %+v, want the answer last", got)
	}
	for _, ev := range got {
		if ev.id == progress.id || (ev.data != "" && ev.id == "") {
			t.Errorf("resumed event %+v: repeated or without an id", ev)
		}
	}

	// Someone else holding the id gets nothing of it.
	other := h.token("stranger")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.URL, nil)
	for k, v := range map[string]string{"Authorization": "Bearer " + other, "Accept": "text/event-stream",
		"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sid, "Last-Event-ID": progress.id} {
		req.Header.Set(k, v)
	}
	if resp, body := send(t, req); resp.StatusCode == http.StatusOK || strings.Contains(string(body), `"id":5`) {
		t.Errorf("a stranger resumed the stream: %s %s", resp.Status, body)
	}
}

// TestCloseCallStream: a tool ends its call's stream mid-call (SEP-1699
// polling); the call goes on and the client resumes to get the answer.
func TestCloseCallStream(t *testing.T) {
	var h *harness
	ended := make(chan struct{}) // the client read the closed stream to its end
	tool := server.ServerTool{
		Tool: mcp.NewTool("polled", mcp.WithDescription("closes its stream, then answers")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !h.srv.CloseCallStream(ctx) {
				return mcp.NewToolResultError("could not close the stream"), nil
			}
			select {
			case <-ended:
			case <-t.Context().Done():
			}
			return mcp.NewToolResultText("answered after the close"), nil
		},
	}
	h = newHarnessWith(t, mcpserver.Options{ExtraTools: []server.ServerTool{tool}})
	token := h.token("poller")
	sid := legacySession(t, h.URL, token)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := post(ctx, h.URL, token, "2025-11-25", sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"polled","arguments":{}}}`)
	if err != nil {
		t.Fatal(err)
	}
	var first []sseEvent
	for ev := range readEvents(resp.Body) { // ends when the server closes it
		first = append(first, ev)
	}
	resp.Body.Close()
	close(ended)
	if len(first) != 1 || first[0].id == "" || first[0].retry == "" {
		t.Fatalf("before the close: %+v, want the priming event alone", first)
	}
	got := resumeFrom(t, h.URL, token, sid, first[0].id)
	if len(got) < 2 || !strings.Contains(got[len(got)-1].data, "answered after the close") {
		t.Errorf("resumed %+v", got)
	}

	// On 2026-07-28, which dropped resumption, nothing is closed.
	modern := connect(t, h.URL, mcp.ProtocolVersion20260728, token)
	if res := call(t, modern, "polled", nil, nil); !res.IsError {
		t.Errorf("a 2026-07-28 stream was closed: %v", texts(res))
	}
}
