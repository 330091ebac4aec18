package mcpserver_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/mcpserver"
)

// FuzzHandler throws arbitrary bodies and headers at the whole HTTP stack
// (guard, sessions, mcp-go, agent tools). Whatever comes in, the server
// answers without panicking or failing internally, and refuses what the
// guard must refuse. "go test -fuzz FuzzHandler" explores; the seeds run in
// every "go test".
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method, body, protocol, mcpMethod string
		authed                            bool
	}{
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`, "", "", true},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "server/discover", true},
		{"POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "tools/call", true},
		{"POST", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"assistant","arguments":{"message":["x"],"conversation":7}}}`, "2025-11-25", "", true},
		{"POST", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"!!"}}`, "2026-07-28", "tools/list", true},
		{"POST", `{"jsonrpc":"2.0","method":`, "", "", true},
		{"POST", `[]`, "", "", true},
		{"POST", `null`, "2026-07-28", "", false},
		{"GET", ``, "", "", true},
		{"DELETE", ``, "2025-11-25", "", true},
	}
	for _, s := range seeds {
		f.Add(s.method, []byte(s.body), s.protocol, s.mcpMethod, s.authed)
	}
	h := newHarness(f, mcpserver.GuardOptions{})
	token := h.token("fuzz")
	handler := h.srv.Handler()

	f.Fuzz(func(t *testing.T, method string, body []byte, protocol, mcpMethod string, authed bool) {
		if !validMethod(method) {
			return
		}
		// A legacy GET stream stays open until the client leaves; everything
		// else must finish well within the deadline.
		deadline := 5 * time.Second
		if method == http.MethodGet {
			deadline = 300 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(t.Context(), deadline)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, method, "http://127.0.0.1"+mcpserver.EndpointPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if protocol != "" && validHeader(protocol) {
			req.Header.Set("Mcp-Protocol-Version", protocol)
		}
		if mcpMethod != "" && validHeader(mcpMethod) {
			req.Header.Set("Mcp-Method", mcpMethod)
		}
		if authed {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if ctx.Err() != nil && method != http.MethodGet {
			t.Fatalf("%s %q did not finish in time", method, body)
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %q → %d: %s", method, body, rec.Code, rec.Body)
		}
		if !authed && rec.Code != http.StatusUnauthorized {
			t.Fatalf("unauthenticated request got %d", rec.Code)
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case "GET", "POST", "DELETE", "HEAD", "PUT", "OPTIONS":
		return true
	}
	return false
}

func validHeader(v string) bool {
	return len(v) < 200 && !strings.ContainsAny(v, "\r\n\x00")
}
