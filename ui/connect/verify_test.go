package connect

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// refusing is a server that answers every request with status, saying
// what a refused token says, so that only the status can tell them apart.
func refusing(t *testing.T, status int) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
		}
		http.Error(w, "Deskhand refused this client's token (revoked?): connect the client again", status)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// TestVerifyTellsARefusedTokenByItsStatus: a 401, over HTTP and through
// the stdio bridge (this test binary, see TestMain), is a refused token;
// another status is not, whatever its text says.
func TestVerifyTellsARefusedTokenByItsStatus(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	secrets := &fileSecrets{path: filepath.Join(t.TempDir(), "secrets.json")}
	if err := secrets.Set(SecretKey(ClaudeDesktop.ID), "dh_refused"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(secretsEnv, secrets.path)
	for _, tc := range []struct {
		status int
		want   Health
	}{
		{http.StatusUnauthorized, TokenRefused},
		{http.StatusForbidden, Broken},
		{http.StatusInternalServerError, Broken},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			url := refusing(t, tc.status)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if got := verifyHTTP(ctx, url, "dh_refused"); got.Health != tc.want {
				t.Errorf("over HTTP: %v (%s), want %v", got.Health, got.Detail, tc.want)
			}
			t.Setenv(bridgeEnv, url)
			if got := verifyStdio(ctx, exe, []string{"-test.run=^$"}, nil); got.Health != tc.want {
				t.Errorf("through the bridge: %v (%s), want %v", got.Health, got.Detail, tc.want)
			}
		})
	}
}

// TestVerifyEndsItsSession: the handshake's session is ended with the
// token, so a server that checks tokens does not keep it until it idles
// out.
func TestVerifyEndsItsSession(t *testing.T) {
	deleted := make(chan string, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer dh_token" {
			http.Error(w, "missing token", http.StatusUnauthorized)
			if r.Method == http.MethodDelete {
				deleted <- "refused: " + got
			}
			return
		}
		var msg struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		switch r.Method {
		case http.MethodDelete:
			deleted <- r.Header.Get("Mcp-Session-Id")
			return
		case http.MethodGet:
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil || msg.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		result := map[string]any{"tools": []any{}}
		if msg.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s1")
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fake", "version": "0"}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	}))
	t.Cleanup(hs.Close)
	if got := verifyHTTP(t.Context(), hs.URL+"/mcp", "dh_token"); got.Health != Verified {
		t.Fatalf("verify: %v (%s)", got.Health, got.Detail)
	}
	select {
	case got := <-deleted:
		if got != "s1" {
			t.Errorf("the session's DELETE was %s, want session s1 ended with the token", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("the session was never ended")
	}
}
