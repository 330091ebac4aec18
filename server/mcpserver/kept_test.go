package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/mcpserver"
)

// burstTool sends n progress notifications of size bytes each, then
// answers "burst done".
func burstTool(h **harness) server.ServerTool {
	return server.ServerTool{
		Tool: mcp.NewTool("burst", mcp.WithDescription("sends progress, then answers"), mcp.WithNumber("n"), mcp.WithNumber("size")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range req.GetInt("n", 1) {
				if err := (*h).srv.Notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "message": strings.Repeat("z", req.GetInt("size", 10))}); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
			}
			return mcp.NewToolResultText("burst done"), nil
		},
	}
}

// resumeData is resumeFrom without the events that carry no data (the
// retry interval).
func resumeData(t *testing.T, url, token, sid, lastID string) []sseEvent {
	t.Helper()
	var got []sseEvent
	for _, ev := range resumeFrom(t, url, token, sid, lastID) {
		if ev.data != "" {
			got = append(got, ev)
		}
	}
	return got
}

// clientOf registers a client; it returns its principal and token.
func clientOf(t *testing.T, h *harness, name string) (string, string) {
	t.Helper()
	c, token, err := h.core.Clients().Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, token
}

// burst makes a resumable call of the burst tool on the session and reads
// its stream to the end; it returns the raw stream and the events' ids.
func burst(t *testing.T, h *harness, token, sid string, id, n, size int) (raw string, ids []string) {
	t.Helper()
	resp, err := post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid,
		toolCall(mcp.ProtocolVersion20251125, id, "burst", fmt.Sprintf(`{"n":%d,"size":%d}`, n, size), `"progressToken":"b"`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range readEvents(strings.NewReader(string(body))) {
		if ev.id != "" {
			ids = append(ids, ev.id)
		}
	}
	if !strings.Contains(string(body), "burst done") {
		t.Fatalf("burst %d: %.300s", id, body)
	}
	return string(body), ids
}

// TestKeptStreamsShareByClient: one client flooding resumable streams
// (past its share of streams and of bytes, and past the totals) loses its
// own oldest streams, and every event of another client's stream stays
// resumable.
func TestKeptStreamsShareByClient(t *testing.T) {
	var h *harness
	h = newHarnessWith(t, mcpserver.Options{ExtraTools: []server.ServerTool{burstTool(&h)}})
	b, bToken := clientOf(t, h, "b")
	a, aToken := clientOf(t, h, "a")
	bSession, aSession := legacySession(t, h.URL, bToken), legacySession(t, h.URL, aToken)

	// b's call ended; its client lost the stream before the end.
	_, bIDs := burst(t, h, bToken, bSession, 1, 3, 1000)
	if len(bIDs) != 5 {
		t.Fatalf("b's stream: ids %v, want the priming event, 3 progress and the answer", bIDs)
	}
	bKept := h.srv.KeptOf(t, b)

	// a sends 17.6 MiB, more than all clients together may keep, in
	// streams of one event near the bound of a stream...
	_, first := burst(t, h, aToken, aSession, 100, 1, 1000<<10)
	for i := 1; i < 18; i++ {
		burst(t, h, aToken, aSession, 100+i, 1, 1000<<10)
		if k := h.srv.KeptOf(t, a); k.Bytes > mcpserver.DefaultMaxKeptBytesPerClient {
			t.Fatalf("after %d calls a keeps %d bytes, over its share of %d", i+1, k.Bytes, mcpserver.DefaultMaxKeptBytesPerClient)
		}
	}
	// ...then more streams than its share.
	var last []string
	for i := range mcpserver.DefaultMaxKeptStreamsPerClient + 6 {
		_, last = burst(t, h, aToken, aSession, 200+i, 1, 10)
	}
	if k := h.srv.KeptOf(t, a); k.Streams != mcpserver.DefaultMaxKeptStreamsPerClient || k.Bytes > mcpserver.DefaultMaxKeptBytesPerClient {
		t.Errorf("a keeps %d streams and %d bytes, want its share of %d streams and at most %d bytes",
			k.Streams, k.Bytes, mcpserver.DefaultMaxKeptStreamsPerClient, mcpserver.DefaultMaxKeptBytesPerClient)
	}
	if k := h.srv.KeptOf(t, b); k != bKept {
		t.Errorf("b's kept stream went from %+v to %+v", bKept, k)
	}

	// b resumes from its priming event: every event, the answer last.
	got := resumeData(t, h.URL, bToken, bSession, bIDs[0])
	var ids []string
	for _, ev := range got {
		ids = append(ids, ev.id)
	}
	if strings.Join(ids, " ") != strings.Join(bIDs[1:], " ") || len(got) == 0 || !strings.Contains(got[len(got)-1].data, "burst done") {
		t.Errorf("b resumed %v, want %v ending with the answer", ids, bIDs[1:])
	}
	// a's first stream went to keep a within its share: 410, naming it.
	resp, body := send(t, resumeRequest(t, h.URL, aToken, aSession, first[0]))
	if resp.StatusCode != http.StatusGone || !strings.Contains(string(body), fmt.Sprintf("%d calls and 4 MiB for each client", mcpserver.DefaultMaxKeptStreamsPerClient)) {
		t.Errorf("resuming a's first stream: %s %q, want 410 naming the limits", resp.Status, body)
	}
	// a's last stream is kept.
	if got := resumeData(t, h.URL, aToken, aSession, last[0]); len(got) != 2 || !strings.Contains(got[1].data, "burst done") {
		t.Errorf("a resumed its last stream: %+v", got)
	}
}

// TestDetachedStreamsCount: a call whose tool ended its response
// (CloseCallStream) goes on, and its kept stream counts in its client's
// share of kept streams until it ends: past that share the client's next
// call is served without resumption, with a comment naming the limit, and
// cannot detach; another client's calls still can. Once the detached calls
// end (and are resumed) there is room again.
func TestDetachedStreamsCount(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var h *harness
	detach := server.ServerTool{
		Tool: mcp.NewTool("detach", mcp.WithDescription("ends its response, then answers when released")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !h.srv.CloseCallStream(ctx) {
				return mcp.NewToolResultError("could not close the stream"), nil
			}
			select {
			case <-release:
				return mcp.NewToolResultText("answered after the release"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
	h = newHarnessWith(t, mcpserver.Options{ExtraTools: []server.ServerTool{detach}, MaxKeptStreamsPerClient: 2})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	d, dToken := clientOf(t, h, "d")
	_, eToken := clientOf(t, h, "e")
	dSession, eSession := legacySession(t, h.URL, dToken), legacySession(t, h.URL, eToken)

	call := func(token, sid string, id int) (priming, raw string) {
		t.Helper()
		resp, err := post(t.Context(), h.URL, token, mcp.ProtocolVersion20251125, sid, toolCall(mcp.ProtocolVersion20251125, id, "detach", `{}`, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body) // ends when the tool detaches, or with the answer
		for ev := range readEvents(strings.NewReader(string(body))) {
			if ev.id != "" && ev.data == "" {
				return ev.id, string(body)
			}
		}
		return "", string(body)
	}
	var detached []string
	for i := range 2 {
		priming, raw := call(dToken, dSession, 10+i)
		if priming == "" || strings.Contains(raw, "result") {
			t.Fatalf("d's call %d did not detach: %q", i+1, raw)
		}
		detached = append(detached, priming)
	}
	if k := h.srv.KeptOf(t, d); k.Streams != 2 {
		t.Fatalf("d keeps %d streams, want its 2 detached ones", k.Streams)
	}
	priming, raw := call(dToken, dSession, 12)
	if priming != "" || !strings.Contains(raw, ": this stream cannot be resumed: this client already has 2 call streams kept for resumption, none ended") ||
		!strings.Contains(raw, "could not close the stream") {
		t.Errorf("d's third call, its share held by detached calls: %q", raw)
	}
	if priming, raw := call(eToken, eSession, 20); priming == "" || strings.Contains(raw, "result") {
		t.Errorf("e's call while d's share is full: %q", raw)
	} else {
		detached = append(detached, priming)
	}

	once.Do(func() { close(release) })
	sessions := []string{dSession, dSession, eSession}
	tokens := []string{dToken, dToken, eToken}
	for i, id := range detached {
		if got := resumeData(t, h.URL, tokens[i], sessions[i], id); len(got) != 1 || !strings.Contains(got[0].data, "answered after the release") {
			t.Errorf("resuming detached call %d: %+v", i+1, got)
		}
	}
	// Both of d's streams ended: its next call detaches again.
	if priming, raw := call(dToken, dSession, 13); priming == "" {
		t.Errorf("d's call once its detached calls ended: %q", raw)
	} else if got := resumeData(t, h.URL, dToken, dSession, priming); len(got) != 1 || !strings.Contains(got[0].data, "answered after the release") {
		t.Errorf("resuming d's last call: %+v", got)
	}
}
