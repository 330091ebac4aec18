package main

import (
	"bytes"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/ui/cli"
)

// brokenListener is a listener whose Accept fails for good.
type brokenListener struct{ net.Listener }

func (brokenListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept: the listener broke")
}

// TestServeFailsWhenHTTPStops: serve exits non-zero, with the reason,
// when its HTTP server stops by itself (it used to exit 0).
func TestServeFailsWhenHTTPStops(t *testing.T) {
	broken := func(g cli.Globals) ([]net.Listener, error) {
		lns, err := listen(g)
		for i := range lns {
			lns[i] = brokenListener{lns[i]}
		}
		return lns, err
	}
	var stderr bytes.Buffer
	err := program{}.serveOn(t.Context(), cli.Globals{Data: t.TempDir(), Addr: "127.0.0.1:0", Ollama: ollamatest.NewServer(t).URL}, &stderr, broken)
	status := cli.Exit(err, &stderr)
	if status != 1 || !strings.Contains(stderr.String(), "deskhand: the MCP endpoint http://127.0.0.1:") ||
		!strings.Contains(stderr.String(), "stopped serving\ncause: accept: the listener broke") {
		t.Errorf("serve with a broken listener: status %d\n%s", status, stderr.String())
	}
}

// TestCorruptDatabaseShowsTheCause: the message says what failed, the
// second line why (it used to end at "cannot open the database in …").
func TestCorruptDatabaseShowsTheCause(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, store.FileName), bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	status := exitStatus(t.Context(), []string{"--data", dir, "token", "list"}, strings.NewReader(""), &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if status != 1 || len(lines) != 2 || lines[0] != "deskhand: cannot open the database in "+dir ||
		!strings.HasPrefix(lines[1], "cause: ") || !strings.Contains(lines[1], "not a database") {
		t.Errorf("a corrupt database: status %d\n%s", status, stderr.String())
	}
}

// TestUnreadableSettingsFailTheStart: a setting the start depends on (the
// address, the Ollama host, open local development) that cannot be read
// stops the command with the key and the reason; it used to be taken as
// unset.
func TestUnreadableSettingsFailTheStart(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := deskhand(t, "--data", dir, "token", "list"); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("DROP TABLE settings"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	var stdout, stderr bytes.Buffer
	status := exitStatus(t.Context(), []string{"--data", dir, "token", "list"}, strings.NewReader(""), &stdout, &stderr)
	if status != 1 || !strings.Contains(stderr.String(), "deskhand: cannot read the setting ") ||
		!strings.Contains(stderr.String(), "cause: ") || !strings.Contains(stderr.String(), "no such table") {
		t.Errorf("unreadable settings: status %d\n%s", status, stderr.String())
	}
}
