package desktop

import (
	"testing"

	"fyne.io/fyne/v2/test"
)

// TestEditorKeepsArgumentsInTheLog: the agent editor shows whether an
// agent's arguments are kept in the activity log, notices a change of it
// as unsaved, and saves it.
func TestEditorKeepsArgumentsInTheLog(t *testing.T) {
	core := twoAgents()
	core.agents[1].LogArguments = true
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.editing.ID != "1" || v.logArguments.Checked {
		t.Fatalf("the first agent: editing %q, keeps arguments %v", v.editing.ID, v.logArguments.Checked)
	}
	test.Tap(v.logArguments)
	if v.heading.Text != "Assistant (assistant) — unsaved changes" || v.save.Disabled() {
		t.Errorf("after ticking the box: heading %q, Save enabled %v", v.heading.Text, !v.save.Disabled())
	}
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 || !core.saved[0].LogArguments {
		t.Fatalf("saved %+v; status %q", core.saved, v.status.Text)
	}
	v.show(core.agents[1])
	if !v.logArguments.Checked || v.heading.Text != "Scribe (scribe)" {
		t.Errorf("an agent that keeps them: checked %v, heading %q", v.logArguments.Checked, v.heading.Text)
	}
}
