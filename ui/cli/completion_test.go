package cli

import (
	"slices"
	"strings"
	"testing"
)

// TestCompletion: 'deskhand completion SHELL' prints cobra's script for
// each shell and runs nothing else; the overview lists it; another shell
// is refused. The scripts ask 'deskhand __complete WORDS…', which
// completes commands, subcommands, clients and flags, with global flags
// given before the command, and shows no placeholder's quotes.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "# bash completion V2 for deskhand", "zsh": "#compdef deskhand",
		"fish": "# fish completion for deskhand", "powershell": "# powershell completion for deskhand",
	} {
		env, rec := fakeEnv(t, nil)
		status, stdout, stderr := runLine(t, env, "completion", shell)
		if status != 0 || !strings.HasPrefix(stdout, want) || stderr != "" || len(rec.ran) > 0 {
			t.Errorf("completion %s: status %d, ran %v, stderr %q, stdout begins %.60q; want %q", shell, status, rec.ran, stderr, stdout, want)
		}
	}
	env, _ := fakeEnv(t, nil)
	if status, _, stderr := runLine(t, env, "completion", "tcsh"); status != 2 || !strings.Contains(stderr, "usage: deskhand completion bash|zsh|fish|powershell") {
		t.Errorf("completion tcsh: status %d\n%s", status, stderr)
	}
	if _, stdout, _ := runLine(t, env, "--help"); !strings.Contains(stdout, "\n  completion bash|zsh|fish|powershell") {
		t.Errorf("the overview does not list completion:\n%s", stdout)
	}
	for _, c := range []struct {
		args []string
		want []string // lines, before the directive
	}{
		{[]string{"ag"}, []string{"agent\tlist, add, change, enable, disable and remove agents"}},
		{[]string{"--data", "/x", "ag"}, []string{"agent\tlist, add, change, enable, disable and remove agents"}},
		{[]string{"agent", ""}, []string{"list", "add", "edit", "enable", "disable", "remove"}},
		{[]string{"connect", "claude-"}, []string{"claude-code", "claude-desktop"}},
		{[]string{"stdio", "--cl"}, []string{"--client\tbridge to the running app as this client NAME (default \"stdio\")"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
	} {
		status, stdout, _ := runLine(t, env, append([]string{"__complete"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		var got []string
		for _, l := range lines[:len(lines)-1] { // the last is the directive, ":4"
			if len(c.want) > 0 && !strings.Contains(c.want[0], "\t") {
				l, _, _ = strings.Cut(l, "\t")
			}
			got = append(got, l)
		}
		if status != 0 || !slices.Equal(got, c.want) || strings.Contains(stdout, "`") {
			t.Errorf("__complete %q: status %d, completions %q, want %q\n%s", c.args, status, got, c.want, stdout)
		}
	}
}
