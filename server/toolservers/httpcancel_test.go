package toolservers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpsrv "github.com/mark3labs/mcp-go/server"
)

// TestHTTPCancellationIsSent: over Streamable HTTP, mcp-go's client sends
// no notifications/cancelled (it relies on the stream ending, which a
// 2025-11-25 server need not take as a cancellation); Deskhand's
// transport sends one naming the call's request id.
func TestHTTPCancellationIsSent(t *testing.T) {
	var mu sync.Mutex
	var calls, cancels []map[string]any
	sawCancel := make(chan struct{}, 1)
	mcpHandler := mcpsrv.NewStreamableHTTPServer(helperServer(),
		mcpsrv.WithStreamableHTTPProtocolVersions(mcp.LegacyProtocolVersions()...))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg map[string]any
			if json.Unmarshal(body, &msg) == nil {
				mu.Lock()
				switch msg["method"] {
				case "tools/call":
					calls = append(calls, msg)
				case "notifications/cancelled":
					cancels = append(cancels, msg)
					select {
					case sawCancel <- struct{}{}:
					default:
					}
				}
				mu.Unlock()
			}
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	running := make(chan struct{})
	var once sync.Once
	m, _ := newManager(t, Options{OnProgress: func(context.Context, Progress) { once.Do(func() { close(running) }) }},
		Config{Name: "web", URL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "web", "sleep", nil)
		done <- err
	}()
	select {
	case <-running:
	case <-time.After(waitLimit):
		t.Fatal("no progress from sleep")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	select {
	case <-sawCancel:
	case <-time.After(waitLimit):
		t.Fatal("no notifications/cancelled reached the server")
	}
	mu.Lock()
	defer mu.Unlock()
	params, _ := cancels[0]["params"].(map[string]any)
	if len(calls) != 1 || params["requestId"] != calls[0]["id"] {
		t.Errorf("cancelled %v, calls %v", cancels, calls)
	}
}
