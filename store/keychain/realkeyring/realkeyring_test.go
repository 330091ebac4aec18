package realkeyring_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/keychain"
)

// service keeps test items apart from the app's own, should this run in a
// real desktop session.
const service = "io.deskhand.Deskhand.test"

func TestRealSecretService(t *testing.T) {
	if os.Getenv("DESKHAND_REAL_KEYRING") != "1" {
		t.Skip("needs a real Secret Service: set DESKHAND_REAL_KEYRING=1, or run store/keychain/testdata/real-keyring.sh, which starts one in a private D-Bus session")
	}
	path := filepath.Join(t.TempDir(), "secrets.json")
	var mu sync.Mutex
	var warns []string
	s := keychain.New(keychain.Options{
		Service:      service,
		FallbackPath: path,
		Timeout:      10 * time.Second,
		Warn: func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			warns = append(warns, msg)
		},
	})
	if err := s.Probe(); err != nil {
		t.Fatalf("Probe: %v", err)
	}

	key := fmt.Sprintf("real-test-%d", time.Now().UnixNano())
	value := "s3cr3t ✓ " + key
	t.Cleanup(func() { s.Delete(key) }) // best effort, if a step below failed

	if err := s.Set(key, value); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := s.Get(key)
	if err != nil || got != value {
		t.Fatalf("Get = %q, %v; want %q", got, err, value)
	}
	// The item is really in the Secret Service, not in some mock.
	if tool, err := exec.LookPath("secret-tool"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, tool, "lookup", "service", service, "username", key).Output()
		if err != nil || strings.TrimSuffix(string(out), "\n") != value {
			t.Errorf("secret-tool lookup = %q, %v; want %q", out, err, value)
		}
	} else {
		t.Log("secret-tool not found (package libsecret-tools); skipping the cross-check")
	}

	if err := s.Delete(key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(key); !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want agent.ErrNotFound", err)
	}
	if err := s.Delete(key); !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("Delete again = %v, want agent.ErrNotFound", err)
	}

	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fallback file was written (%v): the keychain was not used", err)
	}
	if s.Insecure() {
		t.Error("Insecure() = true")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
}
