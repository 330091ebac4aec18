package cli

import (
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestTokenAgents: 'token agents' shows and sets which agents a client
// sees, and 'token list' shows each client's, on the core directly (the
// app not running) and through the running app's control channel, where
// the app's core changes at once.
func TestTokenAgents(t *testing.T) {
	for _, running := range []bool{false, true} {
		name := map[bool]string{false: "core", true: "control channel"}[running]
		t.Run(name, func(t *testing.T) {
			core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			for _, slug := range []string{"researcher", "scribe", "coder"} {
				if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: slug, Model: "m", Enabled: true}); err != nil {
					t.Fatal(err)
				}
			}
			cursor, _, err := core.Clients().Create(t.Context(), "cursor")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := core.Clients().Create(t.Context(), "claude"); err != nil {
				t.Fatal(err)
			}
			env := coreEnv(t, core, running)
			tests := []struct {
				args       []string
				wantStatus int
				want       string
			}{
				{[]string{"token", "agents", "cursor"}, 0, "cursor sees all agents\n"},
				{[]string{"token", "agents", "cursor", "scribe", "researcher"}, 0, "cursor now sees 2 agents: researcher, scribe\n"},
				{[]string{"token", "agents", "cursor"}, 0, "cursor sees 2 agents: researcher, scribe\n"},
				{[]string{"token", "agents", "cursor", "researcher", "nope"}, 1, `no agent with the slug "nope"`},
				{[]string{"token", "agents", "cursor"}, 0, "cursor sees 2 agents: researcher, scribe\n"},
				{[]string{"token", "agents", "nobody", "--all"}, 1, `no active client named "nobody"`},
				{[]string{"token", "agents", "cursor", "--all", "scribe"}, 2, "usage: deskhand token agents"},
				{[]string{"token", "agents"}, 2, "usage: deskhand token agents"},
				{[]string{"token", "list", "--all"}, 2, "--all goes with 'token agents' only"},
				{[]string{"token", "list"}, 0, "2 agents: researcher, scribe"},
				{[]string{"token", "agents", "cursor", "researcher"}, 0, "cursor now sees 1 agent: researcher\n"},
			}
			for _, tt := range tests {
				status, stdout, stderr := runWith(t, env, "", tt.args...)
				if status != tt.wantStatus || !strings.Contains(stdout+stderr, tt.want) {
					t.Errorf("%q: status %d (want %d)\n%s%s\nwant %q", tt.args, status, tt.wantStatus, stdout, stderr, tt.want)
				}
			}
			if got := core.Clients().VisibleTo(cursor.ID).Slugs(); len(got) != 1 || got[0] != "researcher" {
				t.Errorf("the core sees cursor's agents as %v, want [researcher]", got)
			}
			if _, stdout, _ := runWith(t, env, "", "token", "list"); !strings.Contains(stdout, "AGENTS") ||
				!strings.Contains(stdout, "1 agent: researcher") || !strings.Contains(stdout, "all agents") {
				t.Errorf("token list:\n%s", stdout)
			}
			if status, stdout, _ := runWith(t, env, "", "token", "agents", "cursor", "--all"); status != 0 || stdout != "cursor now sees all agents\n" {
				t.Errorf("--all: %d %q", status, stdout)
			}
		})
	}
}
