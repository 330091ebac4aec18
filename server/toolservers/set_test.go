package toolservers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetRestartsChangedAndStopsRemoved(t *testing.T) {
	requireUnix(t)
	cfg := helperConfig("helper", "mcp")
	m, rec := newManager(t, Options{}, cfg)
	mustCall(t, m, "helper", "echo", `{"message":"one"}`)
	pid := statusOf(t, m, "helper").PID
	exited := watchExit(t, pid)

	changed := cfg
	changed.Env = map[string]string{helperEnv: "mcp", "EXTRA": "1"}
	if err := m.Set([]Config{changed}); err != nil {
		t.Fatal(err)
	}
	if !exited() || alive(t, pid) {
		t.Errorf("process %d runs on after its configuration changed", pid)
	}
	if st := statusOf(t, m, "helper"); st.State != StateStopped {
		t.Errorf("after the change: %+v", st)
	}
	mustCall(t, m, "helper", "echo", `{"message":"two"}`)
	pid2 := statusOf(t, m, "helper").PID
	if pid2 == pid || pid2 == 0 {
		t.Errorf("pid after the change: %d (was %d)", pid2, pid)
	}
	// The same configuration again changes nothing.
	if err := m.Set([]Config{changed}); err != nil || statusOf(t, m, "helper").PID != pid2 {
		t.Errorf("Set with the same configuration restarted it: %v", err)
	}
	exited2 := watchExit(t, pid2)
	n := rec.len()
	if err := m.Set(nil); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, n, "removed", func(e Event) bool { return e.Server == "helper" && e.Removed })
	if !exited2() || alive(t, pid2) || len(m.Status()) != 0 {
		t.Errorf("after removal: pid %d alive %v, status %+v", pid2, alive(t, pid2), m.Status())
	}
	// An invalid set changes nothing.
	if err := m.Set([]Config{cfg, cfg}); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestServerLogIsCapped(t *testing.T) {
	dir := t.TempDir()
	l := newServerLog(dir, "srv", 100, func(s string) string { return s })
	for i := range 25 {
		_, _ = l.Write([]byte(strings.Repeat(string(rune('a'+i)), 9) + "\n"))
	}
	l.Close()
	cur, err := os.ReadFile(filepath.Join(dir, "srv.log"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, "srv.log.1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) > 100 || len(old) > 100 || !strings.HasSuffix(string(cur), "yyyyyyyyy\n") {
		t.Errorf("log %d bytes, old %d bytes:\n%s", len(cur), len(old), cur)
	}
	if tail := l.Tail(2); tail != "xxxxxxxxx\nyyyyyyyyy" {
		t.Errorf("tail = %q", tail)
	}
}

func TestSecretsStayHidden(t *testing.T) {
	url := refusingURL(t) + "?api_key=supersecretkey"
	m, _ := newManager(t, Options{}, Config{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer tokentokentoken"}})
	_, err := m.Tools(t.Context(), "web")
	for _, text := range []string{err.Error(), statusOf(t, m, "web").LastError} {
		if !strings.Contains(text, "refused") || strings.Contains(text, "supersecretkey") || strings.Contains(text, "tokentoken") {
			t.Errorf("error shows a secret or no reason: %s", text)
		}
	}
	c := Config{Name: "x", Command: "x", Env: map[string]string{"GITHUB_TOKEN": "ghp_abcdefghijkl", "DEBUG": "1"}}
	if got := c.scrub("auth failed for ghp_abcdefghijkl, DEBUG=1"); got != "auth failed for [GITHUB_TOKEN hidden], DEBUG=1" {
		t.Errorf("scrub = %q", got)
	}
}

// TestServerLogRedacts: what the log keeps, in its file and its tail, is
// redacted, also when the server writes a secret in two pieces; a partial
// line is kept once the log closes.
func TestServerLogRedacts(t *testing.T) {
	dir := t.TempDir()
	l := newServerLog(dir, "srv", 1<<20, strings.NewReplacer("tok-91f3c2a7", "[redacted]").Replace)
	for _, p := range []string{"env: API=tok-91f", "3c2a7\nagain tok-91", "f3c2a7 and more", "\nlast tok-91f3c2a7"} {
		_, _ = l.Write([]byte(p))
	}
	l.Printf("stopping")
	l.Close()
	got, err := os.ReadFile(filepath.Join(dir, "srv.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got)+l.Tail(10), "tok-") || !strings.Contains(string(got), "again [redacted] and more\nlast [redacted]\n[deskhand ") {
		t.Errorf("log:\n%s\ntail:\n%s", got, l.Tail(10))
	}
}
