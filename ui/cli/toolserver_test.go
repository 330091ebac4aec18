package cli

import (
	"flag"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

func TestParseStopsFlagsAtDoubleDash(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"add", "fs", "--command", "npx", "--", "-y", "--verbose", "/tmp"}, []string{"add", "fs", "-y", "--verbose", "/tmp"}},
		{[]string{"add", "fs", "--command", "npx", "x", "y"}, []string{"add", "fs", "x", "y"}},
		{[]string{"--", "--command"}, []string{"--command"}},
	} {
		fs := flag.NewFlagSet("toolserver", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f cmdFlags
		toolServerFlags(fs, &f)
		got, err := parse(fs, tc.args)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parse(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
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
