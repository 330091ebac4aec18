package keychain

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/deskhand/deskhand/server/agent"
)

// TestGoKeyringMock runs the real backend (go-keyring) over its in-memory
// mock. keyring.MockInit replaces go-keyring's provider for the rest of
// this test binary and cannot be undone, so this test is not parallel, no
// other test in this package uses the real backend, and the test against a
// real Secret Service lives in its own binary (./realkeyring).
func TestGoKeyringMock(t *testing.T) {
	keyring.MockInit()
	path := filepath.Join(t.TempDir(), "secrets.json")
	w := &warnings{}
	s := New(Options{FallbackPath: path, Warn: w.warn})

	if err := s.Probe(); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if err := s.Set("k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := keyring.Get(DefaultService, "k"); err != nil || v != "v" {
		t.Fatalf("keyring.Get = %q, %v", v, err)
	}
	mustGet(t, s, "k", "v")
	if err := s.Delete("k"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get("k")
	wantNotFound(t, "Get after Delete", err)
	wantNotFound(t, "Delete again", s.Delete("k"))
	noFile(t, path)

	keyring.MockInitWithError(errors.New("boom"))
	if err := s.Set("k", "v2"); err != nil {
		t.Fatal(err)
	}
	if ws := w.list(); len(ws) != 1 || !strings.Contains(ws[0], "boom") {
		t.Errorf("warnings = %q", ws)
	}
	mustGet(t, s, "k", "v2")
	var ue *agent.UserError
	if err := s.Probe(); !errors.As(err, &ue) {
		t.Errorf("Probe with a failing keyring = %v, want a UserError", err)
	}
	keyring.MockInit() // leave a working mock behind for anything after
}
