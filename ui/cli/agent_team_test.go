package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestAgentTeamFlag: 'agent add/edit --team' sets a team by slugs (kept
// as IDs, in order), --no-team clears it, 'agent list' shows it; an
// unknown slug and a cycle are refused and change nothing; through the
// core and through the running app's control channel.
func TestAgentTeamFlag(t *testing.T) {
	for _, running := range []bool{false, true} {
		name := map[bool]string{false: "core", true: "control channel"}[running]
		t.Run(name, func(t *testing.T) {
			core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			env := coreEnv(t, core, running)
			team := func(slug string) []string {
				a, _ := core.Agents().BySlug(slug)
				var out []string
				for _, m := range core.Agents().Team(a) {
					out = append(out, m.Slug)
				}
				return out
			}
			tests := []struct {
				args    []string
				status  int
				say     string   // in what is printed
				lead    []string // the lead's team after
				comment string
			}{
				{[]string{"agent", "add", "scribe"}, 0, "Saved scribe", nil, "a member"},
				{[]string{"agent", "add", "critic"}, 0, "Saved critic", nil, "another"},
				{[]string{"agent", "add", "lead", "--team", "scribe,critic"}, 0, "Saved lead", []string{"scribe", "critic"}, "added with a team"},
				{[]string{"agent", "list"}, 0, "scribe,critic", []string{"scribe", "critic"}, "listed"},
				{[]string{"agent", "edit", "lead", "--team", "critic, scribe"}, 0, "Saved lead", []string{"critic", "scribe"}, "reordered"},
				{[]string{"agent", "edit", "lead", "--team", "critic,nobody"}, 1, "no agent named nobody", []string{"critic", "scribe"}, "unknown: refused"},
				{[]string{"agent", "edit", "critic", "--team", "lead"}, 1, "critic → lead → critic", []string{"critic", "scribe"}, "cycle: refused"},
				{[]string{"agent", "edit", "lead", "--team", "x", "--no-team"}, 2, "not both", []string{"critic", "scribe"}, "both flags"},
				{[]string{"agent", "list", "--team", "x"}, 2, "--team is for 'agent add' and 'agent edit'", []string{"critic", "scribe"}, "not for list"},
				{[]string{"agent", "remove", "critic"}, 0, "Removed critic", []string{"scribe"}, "a removed member leaves the team"},
				{[]string{"agent", "edit", "lead", "--no-team"}, 0, "Saved lead", nil, "cleared"},
			}
			for _, tt := range tests {
				status, stdout, stderr := runLine(t, env, tt.args...)
				if status != tt.status || !strings.Contains(stdout+stderr, tt.say) {
					t.Errorf("%s: %q: status %d, want %d saying %q\n%s%s", tt.comment, tt.args, status, tt.status, tt.say, stdout, stderr)
				}
				if got := team("lead"); !slices.Equal(got, tt.lead) {
					t.Errorf("%s: lead's team = %q, want %q", tt.comment, got, tt.lead)
				}
			}
		})
	}
}
