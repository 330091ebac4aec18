package desktop

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
)

// TestEditorTeam: the editor offers the other agents as the team, shows
// the saved team checked (unchanged until the person changes it), and
// saves the members checked, the saved ones in their order first.
func TestEditorTeam(t *testing.T) {
	core := twoAgents()
	core.agents = append(core.agents, agent.Agent{ID: "3", Slug: "trains", Name: "Trains"})
	core.agents[0].Team = []string{"3"}
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.editing.ID != "1" {
		t.Fatalf("editing %q", v.editing.ID)
	}
	if got := v.team.checks.Options; len(got) != 2 || slices.Contains(got, agentLabel(core.agents[0])) {
		t.Errorf("team options %v: want the two others", got)
	}
	if got := v.team.checks.Selected; !slices.Equal(got, []string{agentLabel(core.agents[2])}) {
		t.Errorf("checked %v, want the saved member", got)
	}
	if v.hasChanges() {
		t.Error("a saved team shows as an unsaved change")
	}
	v.team.checks.SetSelected(append(v.team.checks.Selected, agentLabel(core.agents[1])))
	if v.heading.Text != "Assistant (assistant) — unsaved changes" {
		t.Errorf("after checking a member: heading %q", v.heading.Text)
	}
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 || !slices.Equal(core.saved[0].Team, []string{"3", "2"}) {
		t.Fatalf("saved %+v; status %q", core.saved, v.status.Text)
	}
}
