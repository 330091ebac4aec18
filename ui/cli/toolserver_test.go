package cli

import (
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestParseStopsFlagsAtDoubleDash: after '--', toolserver add's words are
// the command's arguments, flags or not.
func TestParseStopsFlagsAtDoubleDash(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"toolserver", "add", "fs", "--command", "npx", "--", "-y", "--verbose", "/tmp"}, []string{"fs", "-y", "--verbose", "/tmp"}},
		{[]string{"toolserver", "add", "fs", "--command", "npx", "x", "y"}, []string{"fs", "x", "y"}},
		{[]string{"toolserver", "add", "fs", "-command", "npx", "--", "-dir", "/tmp"}, []string{"fs", "-dir", "/tmp"}},
		{[]string{"toolserver", "add", "--", "--command"}, []string{"--command"}},
	} {
		env, _ := fakeEnv(t, nil)
		c, got, err := parseLine(env, tc.args)
		if err != nil || c.CommandPath() != "deskhand toolserver add" || !slices.Equal(got, tc.want) {
			t.Errorf("parse(%q) = %v %q, %v; want toolserver add %q", tc.args, c, got, err, tc.want)
		}
	}
}

func TestReadSecretsInFlagOrder(t *testing.T) {
	refs := []secretRef{{name: "TOKEN"}, {header: true, name: "Authorization"}, {name: "OTHER"}}
	sec, err := readSecrets(strings.NewReader("t1\r\nBearer h2\nt3"), io.Discard, "fs", refs)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.ToolServerSecrets{Env: map[string]string{"TOKEN": "t1", "OTHER": "t3"}, Headers: map[string]string{"Authorization": "Bearer h2"}}
	if !maps.Equal(sec.Env, want.Env) || !maps.Equal(sec.Headers, want.Headers) {
		t.Errorf("secrets = %+v, want %+v", sec, want)
	}
	if _, err := readSecrets(strings.NewReader("only-one\n"), io.Discard, "fs", refs); err == nil || strings.Contains(agent.UserMessage(err), "only-one") {
		t.Errorf("a missing secret: %v", err)
	}
}
