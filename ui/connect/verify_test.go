package connect

import (
	"context"
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
