package cli

import (
	"slices"
	"testing"
)

// TestNormalise: a single-dash long flag the table knows becomes its
// double-dash form, with or without =VALUE; its value, words, unknown
// flags, single letters and everything after "--" stay as they are.
func TestNormalise(t *testing.T) {
	kinds := flagKinds{"client": true, "data": true, "prompt": true, "all": false, "dry-run": false, "help": false}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"written before", []string{"stdio", "-client", "cursor", "-data", "/d/x"}, []string{"stdio", "--client", "cursor", "--data", "/d/x"}},
		{"=value", []string{"stdio", "-client=cursor", "-data=/d/x"}, []string{"stdio", "--client=cursor", "--data=/d/x"}},
		{"bool flags", []string{"connect", "-all", "-dry-run", "-help"}, []string{"connect", "--all", "--dry-run", "--help"}},
		{"double dashes stay", []string{"--client", "x", "--all"}, []string{"--client", "x", "--all"}},
		{"a value that looks like a flag", []string{"agent", "add", "x", "-prompt", "-data"}, []string{"agent", "add", "x", "--prompt", "-data"}},
		{"a value after a double-dash flag", []string{"--prompt", "-all"}, []string{"--prompt", "-all"}},
		{"a value after =", []string{"-prompt=-all", "-all"}, []string{"--prompt=-all", "--all"}},
		{"unknown flags", []string{"-nope", "-nope=1", "-h", "-x"}, []string{"-nope", "-nope=1", "-h", "-x"}},
		{"a bool's next word is not its value", []string{"-all", "-client", "c"}, []string{"--all", "--client", "c"}},
		{"after --", []string{"-all", "--", "-client", "-data", "x"}, []string{"--all", "--", "-client", "-data", "x"}},
		{"words and -", []string{"toolserver", "-", "data", "client"}, []string{"toolserver", "-", "data", "client"}},
		{"a value flag last", []string{"stdio", "-client"}, []string{"stdio", "--client"}},
		{"nothing", nil, []string{}},
	} {
		got := normalise(c.args, kinds)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: normalise(%q) = %q, want %q", c.name, c.args, got, c.want)
		}
		if got == nil {
			t.Errorf("%s: normalise(%q) is nil: cobra would read the process's arguments", c.name, c.args)
		}
	}
}

// TestArgv: the command lines of the real tree as cobra gets them: the
// command's words first, single dashes made double for the flags the
// tree knows, and answer's --client taken as answer takes it (no value).
func TestArgv(t *testing.T) {
	env, _ := fakeEnv(t, nil)
	root := (&invocation{env: env}).commands()
	for _, c := range []struct {
		args, want []string
	}{
		{[]string{"stdio", "-client", "cursor", "-data", "/d/x"}, []string{"stdio", "--client", "cursor", "--data", "/d/x"}},
		{[]string{"-data", "/d/x", "stdio", "-client=cursor"}, []string{"stdio", "--data", "/d/x", "--client=cursor"}},
		{[]string{"--client", "claude-desktop", "stdio", "--data", "/d/x"}, []string{"stdio", "--client", "claude-desktop", "--data", "/d/x"}},
		{[]string{"--data", "/d", "agent", "--client-may-approve", "add", "x"}, []string{"agent", "add", "--data", "/d", "--client-may-approve", "x"}},
		{[]string{"--", "serve", "now"}, []string{"serve", "--", "now"}},
		{[]string{"--data", "/d", "--", "agent", "add", "x"}, []string{"agent", "add", "--data", "/d", "--", "x"}},
		{[]string{"answer", "ID", "approve", "--always", "-client", "-folder", "/x"}, []string{"answer", "ID", "approve", "--always", "--client", "--folder", "/x"}},
		{[]string{"toolserver", "add", "fs", "-command", "npx", "--", "-y", "-data"}, []string{"toolserver", "add", "fs", "--command", "npx", "--", "-y", "-data"}},
		{[]string{"-h", "help", "agent", "add"}, []string{"help", "-h", "agent", "add"}},
		{[]string{"frobnicate", "-data", "/d"}, []string{"frobnicate", "--data", "/d"}},
		{[]string{"--data", "/d"}, []string{"--data", "/d"}},
		{[]string{"__complete", "stdio", "-cl"}, []string{"__complete", "stdio", "-cl"}},
		{nil, []string{}},
	} {
		got := argv(root, c.args)
		if !slices.Equal(got, c.want) || got == nil {
			t.Errorf("argv(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
