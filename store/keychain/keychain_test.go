package keychain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/deskhand/deskhand/server/agent"
)

// fakeKeyring is an in-memory backend whose failures tests switch on.
type fakeKeyring struct {
	mu    sync.Mutex
	items map[[2]string]string // {service, user} -> secret
	err   error                // when set, every call returns it
	block chan struct{}        // when set, every call waits for it to close
	calls int
}

func newFake() *fakeKeyring { return &fakeKeyring{items: map[[2]string]string{}} }

// enter counts a call and returns what it should wait for and fail with.
func (f *fakeKeyring) enter() (<-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.block, f.err
}

func (f *fakeKeyring) Set(service, user, secret string) error {
	block, err := f.enter()
	if block != nil {
		<-block
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items[[2]string{service, user}] = secret
	return nil
}

func (f *fakeKeyring) Get(service, user string) (string, error) {
	block, err := f.enter()
	if block != nil {
		<-block
	}
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[[2]string{service, user}]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (f *fakeKeyring) Delete(service, user string) error {
	block, err := f.enter()
	if block != nil {
		<-block
	}
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]string{service, user}
	if _, ok := f.items[k]; !ok {
		return keyring.ErrNotFound
	}
	delete(f.items, k)
	return nil
}

func (f *fakeKeyring) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeKeyring) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeKeyring) item(user string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[[2]string{DefaultService, user}]
	return v, ok
}

// errNoSecretService is the text go-keyring returns on a session bus
// without a Secret Service (notes/desktop-build.md §6).
var errNoSecretService = errors.New("The name org.freedesktop.secrets was not provided by any .service files")

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

type fixture struct {
	store *Store
	kr    *fakeKeyring
	warns *warnings
	path  string
}

func setup(t *testing.T) fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.json")
	kr := newFake()
	w := &warnings{}
	s := newStore(Options{FallbackPath: path, Warn: w.warn}, kr)
	return fixture{store: s, kr: kr, warns: w, path: path}
}

func mustGet(t *testing.T, s *Store, key, want string) {
	t.Helper()
	got, err := s.Get(key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if got != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("%s: got %v, want an error wrapping agent.ErrNotFound", what, err)
	}
}

func fileSecrets(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("fallback file %s: %v", path, err)
	}
	return m
}

func noFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fallback file %s exists (err %v), want none", path, err)
	}
}

// noTempFiles checks that atomic writes left nothing behind.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestRoundTrip(t *testing.T) {
	f := setup(t)
	s := f.store
	if err := s.Probe(); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if err := s.Set("ollama.api-key", "v1"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "ollama.api-key", "v1")
	if err := s.Set("ollama.api-key", "v2 ✓"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "ollama.api-key", "v2 ✓")
	if v, ok := f.kr.item("ollama.api-key"); !ok || v != "v2 ✓" {
		t.Fatalf("keychain item = %q, %v; want it under service %q", v, ok, DefaultService)
	}
	if err := s.Delete("ollama.api-key"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get("ollama.api-key")
	wantNotFound(t, "Get after Delete", err)
	noFile(t, f.path)
	if s.Insecure() {
		t.Error("Insecure() = true with no fallback file")
	}
	if w := f.warns.list(); len(w) != 0 {
		t.Errorf("unexpected warnings: %q", w)
	}
}

func TestNotFound(t *testing.T) {
	f := setup(t)
	_, err := f.store.Get("nope")
	wantNotFound(t, "Get", err)
	wantNotFound(t, "Delete", f.store.Delete("nope"))
	var ue *agent.UserError
	if errors.As(err, &ue) {
		t.Errorf("not found should not be a UserError: %v", err)
	}
	if err := f.store.Set("", "x"); err == nil {
		t.Error("Set with an empty name succeeded")
	}
}

func TestKeychainFailureFallsBackToFile(t *testing.T) {
	f := setup(t)
	s := f.store
	f.kr.fail(errNoSecretService)

	if err := s.Set("client.claude-desktop", "tok-1"); err != nil {
		t.Fatalf("Set with a failing keychain: %v", err)
	}
	warns := f.warns.list()
	if len(warns) != 1 {
		t.Fatalf("warnings = %q, want exactly one", warns)
	}
	for _, want := range []string{`"client.claude-desktop"`, "plain text", f.path, "no Secret Service on the D-Bus session bus"} {
		if !strings.Contains(warns[0], want) {
			t.Errorf("warning %q does not mention %q", warns[0], want)
		}
	}
	if strings.Contains(warns[0], "tok-1") {
		t.Errorf("warning leaks the secret: %q", warns[0])
	}

	fi, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("fallback file mode = %v, want 0600", fi.Mode().Perm())
	}
	if got := fileSecrets(t, f.path); got["client.claude-desktop"] != "tok-1" {
		t.Errorf("fallback file = %v", got)
	}
	noTempFiles(t, filepath.Dir(f.path))
	if !s.Insecure() {
		t.Error("Insecure() = false with a secret in the fallback file")
	}
	n := f.kr.callCount()
	mustGet(t, s, "client.claude-desktop", "tok-1") // from the file; the keychain still fails
	if f.kr.callCount() != n {
		t.Error("Get asked the keychain for a secret that is in the fallback file")
	}

	// A key in neither place, with the keychain failing: not "not found"
	// (it may be in the keychain) but a UserError saying what to do.
	_, err = s.Get("other")
	var ue *agent.UserError
	if !errors.As(err, &ue) || errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("Get of an unknown key with a failing keychain = %v, want a UserError", err)
	}
	if !strings.Contains(ue.Msg, "gnome-keyring") && runtime.GOOS == "linux" {
		t.Errorf("UserError %q gives no hint", ue.Msg)
	}

	err = s.Probe()
	if !errors.As(err, &ue) {
		t.Fatalf("Probe = %v, want a *agent.UserError", err)
	}
	for _, want := range []string{"not available", "no Secret Service", f.path, "0600"} {
		if !strings.Contains(ue.Msg, want) {
			t.Errorf("Probe message %q does not mention %q", ue.Msg, want)
		}
	}
	if !errors.Is(err, errNoSecretService) {
		t.Errorf("Probe error does not wrap the cause: %v", err)
	}

	// Delete with the keychain still failing: removed from the file, and
	// Warn says a keychain copy may remain.
	if err := s.Delete("client.claude-desktop"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	noFile(t, f.path)
	if s.Insecure() {
		t.Error("Insecure() = true after the only file secret was deleted")
	}
	if w := f.warns.list(); len(w) != 2 || !strings.Contains(w[1], "could not be removed") {
		t.Errorf("warnings after Delete = %q", w)
	}
	if err := s.Delete("other"); !errors.As(err, &ue) || errors.Is(err, agent.ErrNotFound) {
		t.Errorf("Delete of an unknown key with a failing keychain = %v, want a UserError", err)
	}
}

func TestNoFallbackPath(t *testing.T) {
	kr := newFake()
	kr.fail(errNoSecretService)
	w := &warnings{}
	s := newStore(Options{Warn: w.warn}, kr)
	err := s.Set("k", "v")
	var ue *agent.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("Set = %v, want a UserError", err)
	}
	if s.Insecure() {
		t.Error("Insecure() = true without a fallback file")
	}
	if err := s.Probe(); !errors.As(err, &ue) || !strings.Contains(ue.Msg, "cannot be saved") {
		t.Errorf("Probe = %v", err)
	}
}

func TestKeychainRecoveredMovesSecretOut(t *testing.T) {
	f := setup(t)
	s := f.store
	f.kr.fail(errNoSecretService)
	for _, k := range []string{"a", "b"} {
		if err := s.Set(k, "old-"+k); err != nil {
			t.Fatal(err)
		}
	}
	f.kr.fail(nil) // the keychain works again

	if err := s.Set("a", "new-a"); err != nil {
		t.Fatal(err)
	}
	if got := fileSecrets(t, f.path); len(got) != 1 || got["b"] != "old-b" {
		t.Fatalf("fallback file after Set(a) = %v, want only b", got)
	}
	if v, ok := f.kr.item("a"); !ok || v != "new-a" {
		t.Fatalf("keychain a = %q, %v", v, ok)
	}
	mustGet(t, s, "a", "new-a")
	if !s.Insecure() {
		t.Error("Insecure() = false while b is still in the file")
	}

	if err := s.Set("b", "new-b"); err != nil {
		t.Fatal(err)
	}
	noFile(t, f.path) // empty → removed
	if s.Insecure() {
		t.Error("Insecure() = true after every secret moved to the keychain")
	}
	mustGet(t, s, "b", "new-b")
	if n := len(f.warns.list()); n != 2 {
		t.Errorf("%d warnings, want 2 (one per fallback Set)", n)
	}
}

func TestCorruptFallbackFile(t *testing.T) {
	f := setup(t)
	s := f.store
	corrupt := []byte("{\"a\": \"x\", oops\n")
	if err := os.WriteFile(f.path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var ue *agent.UserError
		if !errors.As(err, &ue) {
			t.Fatalf("%s = %v, want a *agent.UserError", what, err)
		}
		msg := agent.UserMessage(err)
		if !strings.Contains(msg, f.path) || !strings.Contains(msg, "delete it") {
			t.Errorf("%s message %q should name the file and say to fix or delete it", what, msg)
		}
		if errors.Is(err, agent.ErrNotFound) {
			t.Errorf("%s: a corrupt file is not 'not found'", what)
		}
	}
	_, err := s.Get("a")
	check("Get", err)
	f.kr.fail(errNoSecretService)
	check("Set with a failing keychain", s.Set("a", "y"))
	f.kr.fail(nil)
	check("Set with a working keychain", s.Set("a", "y"))
	check("Delete", s.Delete("a"))
	if !s.Insecure() {
		t.Error("Insecure() = false with an unreadable fallback file")
	}
	got, err := os.ReadFile(f.path)
	if err != nil || !bytes.Equal(got, corrupt) {
		t.Fatalf("corrupt file was changed: %q, %v", got, err)
	}
	if w := f.warns.list(); len(w) != 0 {
		t.Errorf("warnings = %q, want none (nothing was saved)", w)
	}
}

func TestTimeout(t *testing.T) {
	f := setup(t)
	const timeout = 50 * time.Millisecond
	f.store.timeout = timeout
	block := make(chan struct{})
	f.kr.block = block
	t.Cleanup(func() { close(block) }) // let the abandoned calls finish

	start := time.Now()
	_, err := f.store.Get("k")
	elapsed := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Get on a blocked keychain = %v, want ErrTimeout", err)
	}
	if elapsed < timeout || elapsed > 2*time.Second {
		t.Errorf("Get returned after %v, want about %v", elapsed, timeout)
	}

	start = time.Now()
	err = f.store.Probe()
	if !errors.Is(err, ErrTimeout) || !strings.Contains(agent.UserMessage(err), "did not answer within 50ms") {
		t.Errorf("Probe on a blocked keychain = %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("Probe took %v", time.Since(start))
	}

	// A Set that times out is a keychain failure like any other.
	if err := f.store.Set("k", "v"); err != nil {
		t.Fatal(err)
	}
	if w := f.warns.list(); len(w) != 1 || !strings.Contains(w[0], "did not answer") {
		t.Errorf("warnings = %q", w)
	}
	n := f.kr.callCount()
	mustGet(t, f.store, "k", "v") // from the file, without asking the keychain
	if f.kr.callCount() != n {
		t.Error("Get asked the keychain for a secret that is in the fallback file")
	}
}

func TestConcurrentFallbackWrites(t *testing.T) {
	f := setup(t)
	f.kr.fail(errNoSecretService)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprint("k", i)
			if err := f.store.Set(k, k); err != nil {
				t.Error(err)
			}
			if _, err := f.store.Get(k); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := fileSecrets(t, f.path); len(got) != 20 {
		t.Errorf("fallback file has %d secrets, want 20: %v", len(got), got)
	}
	noTempFiles(t, filepath.Dir(f.path))
}
