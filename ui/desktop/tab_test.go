package desktop

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"github.com/deskhand/deskhand/server/agent"
)

// TestTabLeavesMultiLineFields: the window hands Tab to a field that
// accepts it (fyne's multi-line Entry types a tab) and otherwise moves
// the focus on; the editor's fields and the answer fields do not take it.
func TestTabLeavesMultiLineFields(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	for name, f := range map[string]fyne.Tabbable{
		"the instructions": a.agents.prompt,
		"starter prompts":  a.agents.starters,
		"an answer":        newSendEntry(),
	} {
		if f.AcceptsTab() {
			t.Errorf("%s takes Tab: it types a tab instead of moving on", name)
		}
	}
}

// TestRowButtonsKeepTheirHeight: a row of two lines does not stretch its
// buttons to its height.
func TestRowButtonsKeepTheirHeight(t *testing.T) {
	a, _ := newShell(t)
	v := newToolServersView(a, newFakeCore(fakeCore{}).asCore())
	row := v.row(agent.ToolServer{Name: "files", Command: "npx"}, agent.ToolServerStatus{Name: "files", State: "running"})
	row.Resize(fyne.NewSize(900, row.MinSize().Height+40))
	var buttons []*widget.Button
	walk(t, row, func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok {
			buttons = append(buttons, b)
			return true
		}
		return false
	})
	if len(buttons) == 0 {
		t.Fatal("the row has no buttons")
	}
	for _, b := range buttons {
		if b.Size().Height > b.MinSize().Height+1 {
			t.Errorf("%q is %.0f high, its own height %.0f", b.Text, b.Size().Height, b.MinSize().Height)
		}
	}
}

// TestPickHint: once a listed model is picked, the hint to pick one goes.
func TestPickHint(t *testing.T) {
	names := []string{"llama3.2", "qwen3"}
	if got := pickHint("ollama", true, names, ""); got != "ollama lists 2 models: pick one above." {
		t.Errorf("nothing picked: %q", got)
	}
	if got := pickHint("ollama", true, names, "qwen3"); got != "" {
		t.Errorf("a listed model picked: %q, want no hint", got)
	}
	if got := pickHint("ollama", true, names, "typed-by-hand"); got == "" {
		t.Error("a model typed by hand: no hint")
	}
}

// TestTryErrorSpeaksTheWindow: Try it on an agent without a model says
// where to pick one in the window, not which command to run.
func TestTryErrorSpeaksTheWindow(t *testing.T) {
	err := agent.Userf(agent.ErrNoModel, "agent %q has no model: … (or 'deskhand agent edit x --model NAME')", "x")
	if got := tryError(err); strings.Contains(got, "deskhand") || !strings.Contains(got, "Model") {
		t.Errorf("tryError = %q", got)
	}
	if got := tryError(agent.Userf(nil, "the server is down")); got != "the server is down" {
		t.Errorf("another error: %q", got)
	}
}

// TestTrayTellsAnAgentWithoutAModel: an agent switched on but without a
// model is not counted as served, and the tray says it cannot answer.
func TestTrayTellsAnAgentWithoutAModel(t *testing.T) {
	agents := &fakeAgents{agents: []agent.Agent{{ID: "a1", Slug: "assistant", Enabled: true}, {ID: "a2", Slug: "scribe", Model: "m", Enabled: true}}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeAgents: agents}).asCore())
	var labels []string
	for _, it := range a.trayItems() {
		labels = append(labels, it.Label)
	}
	if !slices.Contains(labels, "assistant (no model: it cannot answer)") || !slices.Contains(labels, "scribe") {
		t.Errorf("tray: %q", labels)
	}
	s := statusOf(agents.agents, nil, false, nil, time.Now())
	if got := s.agentsText(); got != "1 agent served · assistant has no model" {
		t.Errorf("status: %q", got)
	}
}

// TestTryItHasItsOwnTab: the editor's settings and Try it each take the
// editor's height; the first-run panel's Try it brings that tab forward
// with the keyboard in its message box.
func TestTryItHasItsOwnTab(t *testing.T) {
	agents := twoAgents()
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeAgents: agents}).asCore())
	a.refresh()
	ui.settle()
	v := a.agents
	v.edit(agents.agents[0])
	if v.editorTabs == nil || len(v.editorTabs.Items) != 2 || v.editorTabs.SelectedIndex() != 0 {
		t.Fatal("the editor has no Settings and Try it tabs, Settings first")
	}
	v.showTry()
	if v.editorTabs.Selected().Text != "Try it" || a.win.Canvas().Focused() != v.try {
		t.Errorf("Try it: tab %q, the keyboard in its box %v", v.editorTabs.Selected().Text, a.win.Canvas().Focused() == v.try)
	}
}
