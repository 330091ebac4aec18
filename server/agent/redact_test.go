package agent_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
)

// TestRedactSecrets: each shape of secret is taken out, with what stands
// around it kept; near misses stay as they are.
func TestRedactSecrets(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words stay", "plain words stay"},
		{`{"Authorization":"Bearer abc.def-ghi_jkl"}`, `{"Authorization":"[redacted]"}`},
		{"token dh_" + strings.Repeat("a", 43) + " used", "token [redacted] used"},
		{"Authorization: Bearer abc.def-123_456", "Authorization: [redacted]"},
		{"Authorization: Basic dXNlcjpwYXNz", "Authorization: [redacted]"},
		{"key sk-ant-api03-" + strings.Repeat("x", 20), "key [redacted]"},
		{"key sk-proj-" + strings.Repeat("Y", 20) + ".", "key [redacted]."},
		{"AIza" + strings.Repeat("b", 35), "[redacted]"},
		{"ghp_" + strings.Repeat("c", 36) + " github_pat_" + strings.Repeat("d", 30), "[redacted] [redacted]"},
		{"glpat-" + strings.Repeat("e", 20), "[redacted]"},
		{"slack xoxb-1234-5678-abcdefgh and xoxp-99999-88888-zz", "slack [redacted] and [redacted]"},
		{"AKIAIOSFODNN7EXAMPLE / ASIAIOSFODNN7EXAMPLE", "[redacted] / [redacted]"},
		{"sk_live_" + strings.Repeat("f", 24) + " rk_live_" + strings.Repeat("g", 24) + " sk_test_" + strings.Repeat("h", 24), "[redacted] [redacted] [redacted]"},
		{"x -----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd\n-----END RSA PRIVATE KEY----- y", "x [redacted] y"},
		{"cut -----BEGIN PRIVATE KEY-----\nMIIE", "cut [redacted]"},
		{"https://h/x?password=hunter2&user=ann", "https://h/x?password=[redacted]&user=ann"},
		{"client_secret=s3cr3t; access_token=abc", "client_secret=[redacted]; access_token=[redacted]"},
		{"SECRET=x TOKEN=y API_KEY=z", "SECRET=[redacted] TOKEN=[redacted] API_KEY=[redacted]"},
		{`{"password": "p\"w", "user": "ann"}`, `{"password": "[redacted]", "user": "ann"}`},
		// Near misses.
		{"dh_short sk-short sk_live_x AKIA1234 xoxb-1", "dh_short sk-short sk_live_x AKIA1234 xoxb-1"},
		{"max_tokens=100 tokens=5 token_count=3 password: none", "max_tokens=100 tokens=5 token_count=3 password: none"},
		{"the bearer of bad news; basic idea", "the bearer of bad news; basic idea"},
		{"-----BEGIN PUBLIC KEY-----\nMIIB", "-----BEGIN PUBLIC KEY-----\nMIIB"},
		{"AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
		{"task-xoxb", "task-xoxb"},
	} {
		if got := agent.RedactSecrets(tc.in); got != tc.want {
			t.Errorf("RedactSecrets(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
		if agent.LooksSecret(tc.in) != (tc.in != tc.want) {
			t.Errorf("LooksSecret(%q) = %v", tc.in, !(tc.in != tc.want))
		}
	}
}

// TestRedactorKnowsValues: a value read from or stored through the
// Secrets it wraps is taken out of text, of what its writer writes and of
// an error's message, whatever its shape; short values are left to the
// shapes.
func TestRedactorKnowsValues(t *testing.T) {
	r := agent.NewRedactor()
	store := &agenttest.Secrets{}
	if err := store.Set("provider/x", "plain-value-91"); err != nil {
		t.Fatal(err)
	}
	secrets := r.Secrets(store)
	if got := r.Redact("plain-value-91"); got != "plain-value-91" {
		t.Fatalf("redacted %q before it was read", got)
	}
	if _, err := secrets.Get("provider/x"); err != nil {
		t.Fatal(err)
	}
	if err := secrets.Set("toolserver/env", "another-one-42"); err != nil {
		t.Fatal(err)
	}
	if err := secrets.Set("short", "abc"); err != nil {
		t.Fatal(err)
	}
	r.Learn("another-one") // inside a longer value: the longer one goes whole
	in := "got plain-value-91 and another-one-42 and abc"
	want := "got [redacted] and [redacted] and abc"
	if got := r.Redact(in); got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	var b bytes.Buffer
	if n, err := r.Writer(&b).Write([]byte(in)); err != nil || n != len(in) || b.String() != want {
		t.Errorf("Writer wrote %q (%d, %v), want %q", b.String(), n, err, want)
	}
	b.Reset()
	log := slog.New(r.Handler(slog.NewTextHandler(&b, nil))).With("key", "plain-value-91")
	log.Warn("failed: another-one-42", "err", errors.New("echo plain-value-91"), slog.Group("g", "k", "another-one-42"), "n", 3)
	if got := b.String(); strings.Contains(got, "plain-value-91") || strings.Contains(got, "another-one-42") || !strings.Contains(got, "n=3") {
		t.Errorf("the log handler wrote %q", got)
	}
	cause := errors.New("detail")
	err := r.Error(agent.Userf(cause, "the server said %s", "plain-value-91"))
	if agent.UserMessage(err) != "the server said [redacted]" || !errors.Is(err, cause) {
		t.Errorf("Error: %q (keeps its cause: %v)", agent.UserMessage(err), errors.Is(err, cause))
	}
	clean := agent.Userf(nil, "nothing secret")
	if r.Error(clean) != clean {
		t.Error("an error with nothing to redact was replaced")
	}
}
