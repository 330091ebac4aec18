package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

func TestGuardLegacyEra(t *testing.T) { guard(t, mcp.ProtocolVersion20251125) }

func TestGuardModernEra(t *testing.T) { guard(t, mcp.ProtocolVersion20260728) }

// guard forges headers against the real server on 127.0.0.1, on the era's
// opening request. A valid token never opens a bad Host or Origin.
func guard(t *testing.T, era string) {
	h := newHarness(t, mcpserver.GuardOptions{
		AllowedHosts:   []string{"*.dev.example", "exact.example"},
		AllowedOrigins: []string{"https://app.example", "https://*.ui.example"},
	})
	token := h.token("alice")
	revoked := h.token("gone")
	if err := h.core.Clients().Revoke(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	port := h.http.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]

	cases := []struct {
		name   string
		host   string // "" keeps 127.0.0.1:PORT
		origin string // "" sends none
		auth   string // "" sends none; "TOKEN" the valid one
		want   int
	}{
		{"loopback ip, no origin", "", "", "TOKEN", 200},
		{"localhost host", "localhost:" + port, "", "TOKEN", 200},
		{"ipv6 loopback host", "[::1]:" + port, "", "TOKEN", 200},
		{"own origin", "", "http://127.0.0.1:" + port, "TOKEN", 200},
		{"own origin by name", "", "http://localhost:" + port, "TOKEN", 200},
		{"allow-listed host pattern", "api.dev.example", "", "TOKEN", 200},
		{"allow-listed exact host", "exact.example:" + port, "", "TOKEN", 200},
		{"allow-listed origin", "", "https://app.example", "TOKEN", 200},
		{"allow-listed origin pattern", "", "https://a.ui.example", "TOKEN", 200},

		{"evil host", "evil.example", "", "TOKEN", 403},
		{"evil host and origin (rebinding)", "evil.example:" + port, "http://evil.example:" + port, "TOKEN", 403},
		{"good host, evil origin", "", "http://evil.example", "TOKEN", 403},
		{"origin null", "", "null", "TOKEN", 403},
		{"localhost.evil.example host", "localhost.evil.example:" + port, "", "TOKEN", 403},
		{"localhost.evil.example origin", "", "http://localhost.evil.example:" + port, "TOKEN", 403},
		{"own origin, other port", "", "http://127.0.0.1:1", "TOKEN", 403},
		{"pattern is not its apex", "dev.example", "", "TOKEN", 403},
		{"origin pattern is not its apex", "", "https://ui.example", "TOKEN", 403},
		{"allow-listed origin, wrong scheme", "", "http://app.example", "TOKEN", 403},
		{"evil host without token", "evil.example", "", "", 403},

		{"no token", "", "", "", 401},
		{"wrong token", "", "", "dh_not-a-token", 401},
		{"revoked token", "", "", revoked, 401},
		{"not bearer", "", "", "Basic Zm9vOmJhcg==", 401},

		// RFC 7235 §2.1: the scheme is case-insensitive; the token is not.
		{"scheme in lower case", "", "", "bearer TOKEN", 200},
		{"scheme in upper case", "", "", "BEARER TOKEN", 200},
		{"scheme in mixed case", "", "", "bEaReR TOKEN", 200},
		{"spaces after the scheme", "", "", "Bearer   TOKEN", 200},
		{"token in other case", "", "", "Bearer " + swapCase(token), 401},
		{"scheme only", "", "", "Bearer ", 401},
		{"longer scheme", "", "", "Bearers TOKEN", 401},
		{"no space after the scheme", "", "", "BearerTOKEN", 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := rawRequest(t, h.URL, era)
			if c.host != "" {
				req.Host = c.host
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			switch {
			case c.auth == "TOKEN":
				req.Header.Set("Authorization", "Bearer "+token)
			case strings.Contains(c.auth, "TOKEN"), strings.Contains(c.auth, " "): // the whole header
				req.Header.Set("Authorization", strings.ReplaceAll(c.auth, "TOKEN", token))
			case c.auth != "":
				req.Header.Set("Authorization", "Bearer "+c.auth)
			}
			resp, body := send(t, req)
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.want, body)
			}
			if c.want == 401 {
				got := resp.Header.Get("WWW-Authenticate")
				want := fmt.Sprintf(`Bearer resource_metadata="http://%s%s"`, req.Host, mcpserver.MetadataPath)
				if got != want {
					t.Errorf("WWW-Authenticate = %q, want %q", got, want)
				}
			}
			if c.want >= 400 && resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Error("a refused request carries CORS headers")
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("nosniff missing")
			}
		})
	}
}

func TestGuardBodyLimit(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("alice")
	big := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), bytes.Repeat([]byte("x"), mcpserver.MaxBodyBytes)...)
	big = append(big, `"}}`...)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			var body io.Reader = bytes.NewReader(big)
			if chunked {
				body = io.MultiReader(bytes.NewReader(big)) // unknown length: sent chunked
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.URL, body)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			if resp, _ := send(t, req); resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", resp.StatusCode)
			}
		})
	}
}

func TestRevokedTokenIsRefusedAtOnce(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("alice")
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, token)
	call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
	if err := h.core.Clients().Revoke(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	req := rawRequest(t, h.URL, mcp.ProtocolVersion20260728)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, _ := send(t, req); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked token got %d", resp.StatusCode)
	}
}

// TestLegacySessionBoundToPrincipal: another token presenting a session id
// gets nothing.
func TestLegacySessionBoundToPrincipal(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	alice, mallory := h.token("alice"), h.token("mallory")
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, alice)
	sid := c.GetSessionId()
	if sid == "" {
		t.Fatal("no legacy session")
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		token string
		want  int
	}{{mallory, http.StatusNotFound}, {alice, http.StatusOK}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tc.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
		resp, out := send(t, req)
		if resp.StatusCode != tc.want {
			t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, out)
		}
		if tc.token == mallory && strings.Contains(string(out), "assistant") {
			t.Error("another principal saw the session's tools")
		}
	}
}

func TestPublicEndpoints(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	get := func(path string, header map[string]string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.http.URL+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	meta := get(mcpserver.MetadataPath, nil)
	var prm map[string]any
	if err := json.NewDecoder(meta.Body).Decode(&prm); err != nil || meta.StatusCode != 200 {
		t.Fatalf("metadata: %d %v", meta.StatusCode, err)
	}
	if prm["resource"] != h.URL {
		t.Errorf("resource = %v, want %s", prm["resource"], h.URL)
	}
	card := get(mcpserver.ServerCardPath, nil)
	raw, _ := io.ReadAll(card.Body)
	if card.StatusCode != 200 || !strings.Contains(string(raw), `"endpoint": "`+h.URL+`"`) {
		t.Errorf("server card: %d %s", card.StatusCode, raw)
	}
	if strings.Contains(string(raw), "inputSchema") || strings.Contains(string(raw), "assistant") {
		t.Error("the public server card lists tools")
	}
	browser := get(mcpserver.EndpointPath, map[string]string{"Accept": "text/html,application/xhtml+xml"})
	if browser.StatusCode != http.StatusFound || browser.Header.Get("Location") != mcpserver.ServerCardPath {
		t.Errorf("browser GET /mcp: %d → %q", browser.StatusCode, browser.Header.Get("Location"))
	}
	if evil := get(mcpserver.ServerCardPath, map[string]string{"Origin": "http://evil.example"}); evil.StatusCode != 403 {
		t.Errorf("server card from an evil origin: %d", evil.StatusCode)
	}
}

// TestInFlightLimit: past the requests in progress allowed, 503 for all
// clients together, 429 for one client's share, each with Retry-After.
func TestInFlightLimit(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(100*time.Millisecond))
	h.opts.MaxInFlight, h.opts.MaxInFlightPerClient = 1, 1
	h.restart()
	token := h.token("alice")
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, token)
	events := h.core.Events().Subscribe(t.Context(), agent.EventTurnStarted)
	done := goCall(t.Context(), c, "assistant", map[string]any{"message": "a slow one"})
	select {
	case <-events:
	case r := <-done:
		t.Fatalf("the slow call ended before its turn started: %v %v", r.res, r.err)
	}
	for _, c := range []struct {
		token  string
		status int
		says   string
	}{
		{h.token("bob"), http.StatusServiceUnavailable, "1 at once is Deskhand's limit for all clients together"},
		{token, http.StatusTooManyRequests, "Too many requests in progress for this client: 1 at once"},
	} {
		req := rawRequest(t, h.URL, mcp.ProtocolVersion20260728)
		req.Header.Set("Authorization", "Bearer "+c.token)
		if resp, body := send(t, req); resp.StatusCode != c.status || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), c.says) {
			t.Errorf("over the limit: %d %s, want %d saying %q", resp.StatusCode, body, c.status, c.says)
		}
	}
	if r := <-done; r.err != nil {
		t.Error(r.err)
	}
}

// swapCase turns upper-case letters to lower case and lower to upper.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}
