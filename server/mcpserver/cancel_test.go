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

	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// post sends one JSON-RPC message as a client of the era would. It
// reports every failure as an error, so that goroutines can use it.
func post(ctx context.Context, url, token, era, sessionID, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build the POST: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", era)
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal([]byte(body), &msg)
	if era == "2026-07-28" {
		req.Header.Set("Mcp-Method", msg.Method)
		if msg.Params.Name != "" {
			req.Header.Set("Mcp-Name", msg.Params.Name)
		}
	}
	return http.DefaultClient.Do(req)
}

// streaming waits until a turn's model is streaming its answer: its first
// delta, whose event it returns.
func streaming(t *testing.T, events <-chan agent.Event) agent.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == agent.EventDelta {
				return e
			}
		case <-deadline:
			t.Fatal("no model streamed an answer")
		}
	}
}

func turnEnded(t *testing.T, events <-chan agent.Event, turn string) agent.Event {
	t.Helper()
	for {
		select {
		case e := <-events:
			if e.Kind == agent.EventTurnEnded && e.Turn == turn {
				return e
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the turn did not end")
		}
	}
}

// TestCancellation: a 2026-07-28 client that closes its call, and a legacy
// client that sends notifications/cancelled, each stop the turn: recorded
// cancelled, the model's stream stopped, no goroutine left behind.
func TestCancellation(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(300*time.Millisecond))
	token := h.token("canceller")
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"tell me a long story"}`

	t.Run("2026-07-28 closes the call", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent()
		events := h.core.Events().Subscribe(t.Context())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			resp, err := post(ctx, h.URL, token, "2026-07-28", "", call+","+meta+"}}")
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		started := streaming(t, events)
		cancel()
		<-done
		if e := turnEnded(t, events, started.Turn); e.Status != agent.TurnCancelled {
			t.Errorf("turn ended %s (%s), want cancelled", e.Status, e.Text)
		}
		checkStopped(t, h, ignore)
	})

	t.Run("2025-11-25 sends notifications/cancelled", func(t *testing.T) {
		resp, err := post(t.Context(), h.URL, token, "2025-11-25", "",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp, err := post(t.Context(), h.URL, token, "2025-11-25", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			resp.Body.Close()
		}
		ignore := goleak.IgnoreCurrent()
		events := h.core.Events().Subscribe(t.Context())
		answer := make(chan string, 1)
		go func() {
			resp, err := post(t.Context(), h.URL, token, "2025-11-25", sid, call+"}}")
			if err != nil {
				answer <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer <- string(body)
		}()
		started := streaming(t, events)
		resp, err = post(t.Context(), h.URL, token, "2025-11-25", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user pressed stop"}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if e := turnEnded(t, events, started.Turn); e.Status != agent.TurnCancelled {
			t.Errorf("turn ended %s (%s), want cancelled", e.Status, e.Text)
		}
		if got := <-answer; !strings.Contains(got, "cancelled") {
			t.Errorf("the call answered %s", got)
		}
		checkStopped(t, h, ignore)
	})
}

// checkStopped: the model's stream was abandoned and nothing of the call
// is left running.
func checkStopped(t *testing.T, h *harness, ignore goleak.Option) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h.ollama.WaitAborted(ctx, 1); err != nil {
		t.Errorf("the model's stream was not stopped: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, ignore, goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}
