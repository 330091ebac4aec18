package desktop

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

func twoAgents() *fakeAgents {
	return &fakeAgents{agents: []agent.Agent{
		{ID: "1", Slug: "assistant", Name: "Assistant", Model: "llama3.2", Backend: agent.BackendProvider, Provider: "ollama", Routing: agent.RouteClient, Enabled: true},
		{ID: "2", Slug: "scribe", Name: "Scribe", Model: "qwen3:8b", Backend: agent.BackendProvider, Provider: "ollama", Enabled: true,
			Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}},
	}}
}

// TestAgentsTabFitsANarrowWindow: the Agents tab lets the window be 640
// pixels wide (labels wrap above their fields).
func TestAgentsTabFitsANarrowWindow(t *testing.T) {
	core := &fakeAgents{agents: []agent.Agent{{ID: "1", Slug: "assistant", Name: "A rather long agent name for a list"}}}
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if w := v.root.MinSize().Width; w > 640 {
		t.Errorf("the Agents tab needs %.0f pixels of width, more than 640", w)
	}
}

// TestEditorStartsOnTheFirstAgent: after the first refresh the editor
// shows the first agent, selected, with nothing to save; with no agent
// it says so and offers New agent, not an empty form.
func TestEditorStartsOnTheFirstAgent(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	if v.editor.Visible() || v.empty.Visible() {
		t.Error("the editor or the empty state shows before the agents are read")
	}
	v.refresh()
	ui.settle()
	if v.editing.ID != "1" || v.name.Text != "Assistant" || !v.editor.Visible() || v.empty.Visible() {
		t.Errorf("at start: editing %q, name %q, editor shown %v", v.editing.ID, v.name.Text, v.editor.Visible())
	}
	if v.heading.Text != "Assistant (assistant)" || !v.save.Disabled() || v.remove.Disabled() {
		t.Errorf("heading %q, Save enabled %v, Delete enabled %v", v.heading.Text, !v.save.Disabled(), !v.remove.Disabled())
	}

	empty, ui2 := agentsScreen(t, &fakeAgents{})
	empty.refresh()
	ui2.settle()
	if empty.editor.Visible() || !empty.empty.Visible() {
		t.Fatal("no agents: the empty state does not show")
	}
	test.Tap(findButton(t, empty.empty, "New agent"))
	if !empty.editor.Visible() || empty.heading.Text != "New agent" || empty.app.win.Canvas().Focused() != empty.name {
		t.Errorf("after New agent: editor shown %v, heading %q, focus %v", empty.editor.Visible(), empty.heading.Text, empty.app.win.Canvas().Focused())
	}
	if !empty.save.Disabled() || !empty.remove.Disabled() {
		t.Error("an untouched new agent offers Save or Delete")
	}
}

// TestEditorNewAgentDerivesTheSlug: New agent clears the selection, heads
// the editor "New agent", and the slug follows the name until typed.
func TestEditorNewAgentDerivesTheSlug(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	v.refresh()
	ui.settle()
	test.Tap(v.newAgentButton)
	if v.editing.ID != "" || v.heading.Text != "New agent" || v.app.win.Canvas().Focused() != v.name || v.name.Text != "" {
		t.Errorf("after New agent: editing %q, heading %q, name %q", v.editing.ID, v.heading.Text, v.name.Text)
	}
	test.Type(v.name, "Trip Planner!")
	if v.slug.Text != "trip-planner" || v.heading.Text != "New agent — unsaved changes" || v.save.Disabled() {
		t.Errorf("slug %q, heading %q, Save disabled %v", v.slug.Text, v.heading.Text, v.save.Disabled())
	}
	v.slug.SetText("trips")
	test.Type(v.name, " 2")
	if v.slug.Text != "trips" {
		t.Errorf("a typed slug changed with the name: %q", v.slug.Text)
	}
	// A saved agent's slug stays: clients know its tool by it.
	v.edit(v.agents[0])
	test.Type(v.name, " Two")
	if v.slug.Text != "assistant" {
		t.Errorf("renaming a saved agent changed its slug: %q", v.slug.Text)
	}
}

// TestEditorAsksBeforeLosingChanges: clicking another agent with unsaved
// changes asks; Keep editing stays (the list too), Discard changes moves
// on, Save saves then moves on; New agent asks too.
func TestEditorAsksBeforeLosingChanges(t *testing.T) {
	core := twoAgents()
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	test.Type(v.prompt, "Be brief.")
	v.list.Select(1)
	if v.leaving == nil || v.editing.ID != "1" {
		t.Fatalf("switching with unsaved changes did not ask: editing %q", v.editing.ID)
	}
	if f := v.app.win.Canvas().Focused(); f != nil {
		t.Errorf("the field typed in keeps the focus (%T), so Escape would not reach the window", f)
	}
	if v.keepEditing.Text != "Keep editing" || v.discardChanges.Text != "Discard changes" || v.saveAndLeave.Text != "Save" {
		t.Errorf("the buttons say %q, %q, %q", v.keepEditing.Text, v.discardChanges.Text, v.saveAndLeave.Text)
	}
	test.Tap(v.keepEditing)
	if v.leaving != nil || v.editing.ID != "1" || v.prompt.Text != "Be brief." || !listSelects(v, 0) {
		t.Errorf("Keep editing: dialog %v, editing %q, prompt %q", v.leaving != nil, v.editing.ID, v.prompt.Text)
	}
	v.list.Select(1)
	if !v.app.closeTopDialog() { // what Escape does
		t.Fatal("Escape found no dialog to close")
	}
	if v.leaving != nil || v.editing.ID != "1" || v.prompt.Text != "Be brief." || !listSelects(v, 0) {
		t.Errorf("Escape: dialog %v, editing %q, prompt %q", v.leaving != nil, v.editing.ID, v.prompt.Text)
	}
	v.list.Select(1)
	test.Tap(v.discardChanges)
	if v.editing.ID != "2" || v.name.Text != "Scribe" || v.heading.Text != "Scribe (scribe)" || !listSelects(v, 1) {
		t.Errorf("Discard changes: editing %q, heading %q", v.editing.ID, v.heading.Text)
	}
	if len(core.saved) != 0 {
		t.Errorf("discarded changes were saved: %+v", core.saved)
	}
	test.Type(v.description, "Writes notes.")
	v.list.Select(0)
	test.Tap(v.saveAndLeave)
	ui.settle()
	if len(core.saved) != 1 || core.saved[0].Description != "Writes notes." || v.editing.ID != "1" || !listSelects(v, 0) {
		t.Errorf("Save: saved %+v, editing %q", core.saved, v.editing.ID)
	}
	test.Type(v.prompt, "More.")
	test.Tap(v.newAgentButton)
	if v.leaving == nil || v.editing.ID != "1" {
		t.Fatal("New agent with unsaved changes did not ask")
	}
	test.Tap(v.discardChanges)
	if v.editing.ID != "" || v.heading.Text != "New agent" || !listSelects(v, -1) {
		t.Errorf("New agent after discarding: editing %q, heading %q", v.editing.ID, v.heading.Text)
	}
}

// listSelects says whether the list's selection is row i (-1: none).
func listSelects(v *agentsView, i int) bool {
	// Selecting a row again is no change: OnSelected is not called.
	called := false
	on := v.list.OnSelected
	v.list.OnSelected = func(widget.ListItemID) { called = true }
	defer func() { v.list.OnSelected = on }()
	if i < 0 {
		for row := range v.agents {
			v.list.Select(row)
			if !called {
				return false
			}
			v.list.UnselectAll()
			called = false
		}
		return true
	}
	v.list.Select(i)
	return !called
}

// TestEditorShortcuts: Ctrl+S saves and Ctrl+N starts a new agent, from
// the window or from a field, only while the Agents tab shows.
func TestEditorShortcuts(t *testing.T) {
	core := newFakeCore(fakeCore{fakeAgents: twoAgents()})
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	v := a.agents
	ctrl := func(key fyne.KeyName) fyne.Shortcut {
		return &desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}
	}
	canvas := a.win.Canvas()
	test.Type(v.prompt, "Be brief.")
	v.prompt.TypedShortcut(ctrl(fyne.KeyS)) // the prompt has the focus
	ui.settle()
	if len(core.saved) != 1 || core.saved[0].Prompt != "Be brief." || v.heading.Text != "Assistant (assistant)" {
		t.Fatalf("Ctrl+S in the prompt: saved %d, heading %q", len(core.saved), v.heading.Text)
	}
	test.Type(v.description, "Helps.")
	canvas.(fyne.Shortcutable).TypedShortcut(ctrl(fyne.KeyS)) // nothing focused
	ui.settle()
	if len(core.saved) != 2 {
		t.Errorf("Ctrl+S in the window: saved %d", len(core.saved))
	}
	canvas.(fyne.Shortcutable).TypedShortcut(ctrl(fyne.KeyS)) // nothing to save
	ui.settle()
	if len(core.saved) != 2 {
		t.Errorf("Ctrl+S with nothing changed saved: %d", len(core.saved))
	}
	v.model.TypedShortcut(ctrl(fyne.KeyN))
	if v.heading.Text != "New agent" || canvas.Focused() != v.name {
		t.Errorf("Ctrl+N: heading %q", v.heading.Text)
	}
	// The window's other shortcuts reach it from a field too.
	other := false
	canvas.AddShortcut(ctrl(fyne.Key1), func(fyne.Shortcut) { other = true })
	v.description.TypedShortcut(ctrl(fyne.Key1))
	if !other {
		t.Error("a window shortcut typed in a field did not reach the window")
	}
	test.Type(v.name, "Other")
	a.tabs.SelectIndex(tabSettings)
	v.name.TypedShortcut(ctrl(fyne.KeyS))
	canvas.(fyne.Shortcutable).TypedShortcut(ctrl(fyne.KeyS))
	ui.settle()
	if len(core.saved) != 2 {
		t.Errorf("Ctrl+S saved from another tab: %d", len(core.saved))
	}
}

// TestWheelScrollsTheFormOverAField: the mouse wheel over the prompt
// scrolls the form, not the entry's own inner scroll.
func TestWheelScrollsTheFormOverAField(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	v.refresh()
	ui.settle()
	v.app.win.Resize(fyne.NewSize(640, 480))
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.prompt)
	if pos.Y > 400 {
		t.Fatalf("the prompt is not in view at %v", pos)
	}
	test.Scroll(v.app.win.Canvas(), pos.Add(fyne.NewPos(20, 20)), 0, -60)
	if v.form.Offset.Y <= 0 {
		t.Errorf("the wheel over the prompt left the form at %v", v.form.Offset)
	}
}

// TestWheelPassLetsClicksThrough: the wheel pass over a field takes the
// wheel only: clicks, hovering, dragging and focus find the field.
func TestWheelPassLetsClicksThrough(t *testing.T) {
	var o any = newWheelPass(nil)
	for name, takes := range map[string]bool{
		"taps":        is[fyne.Tappable](o),
		"right taps":  is[fyne.SecondaryTappable](o),
		"double taps": is[fyne.DoubleTappable](o),
		"the mouse":   is[desktop.Mouseable](o),
		"hovering":    is[desktop.Hoverable](o),
		"the cursor":  is[desktop.Cursorable](o),
		"drags":       is[fyne.Draggable](o),
		"the focus":   is[fyne.Focusable](o),
	} {
		if takes {
			t.Errorf("the wheel pass takes %s from the field under it", name)
		}
	}
	if !is[fyne.Scrollable](o) {
		t.Error("the wheel pass does not take the wheel")
	}
}

func is[T any](o any) bool {
	_, ok := o.(T)
	return ok
}

// TestEntriesGrowWithTheirText: a long prompt makes its field taller, so
// that the form's scroll shows it all.
func TestEntriesGrowWithTheirText(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	v.refresh()
	ui.settle()
	v.app.win.Resize(fyne.NewSize(640, 480))
	before := v.prompt.MinSize().Height
	v.prompt.SetText(strings.Repeat("A line of the prompt.\n", 12))
	if after := v.prompt.MinSize().Height; after <= before*2 {
		t.Errorf("12 lines: the prompt is %v high, %v empty", after, before)
	}
	v.prompt.SetText("")
	if h := v.prompt.MinSize().Height; h != before {
		t.Errorf("emptied, the prompt stays %v high, not %v", h, before)
	}
}

// TestEditorMissingModel: an agent on a provider with no model is warned
// of next to its model, and saving it says so (it still saves).
func TestEditorMissingModel(t *testing.T) {
	core := twoAgents()
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.noModel.Visible() {
		t.Errorf("a warning with a model: %q", v.noModel.Text)
	}
	v.model.SetText("")
	if !v.noModel.Visible() || !strings.HasPrefix(v.noModel.Text, "No model picked") {
		t.Errorf("no model: warning %q, shown %v", v.noModel.Text, v.noModel.Visible())
	}
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 || !strings.Contains(v.status.Text, "No model picked") {
		t.Errorf("saved %d, status %q", len(core.saved), v.status.Text)
	}
	v.runsOn.SetSelected(runsOnClient)
	if v.noModel.Visible() {
		t.Error("an agent on the client's model is warned of a missing model")
	}
}

// TestEditorValidatesNextToTheField: a wrong folder or host says so under
// its field.
func TestEditorValidatesNextToTheField(t *testing.T) {
	v, _ := agentsScreen(t, twoAgents())
	test.Type(v.folders, "notes")
	test.Type(v.reachable, "nas.local")
	if !strings.Contains(v.foldersHint.Text, "not a full path") || !strings.Contains(v.hostsHint.Text, "not a host and port") {
		t.Errorf("hints: %q, %q", v.foldersHint.Text, v.hostsHint.Text)
	}
}

// TestEditorToolsAreDescribed: each tool says in a line what it does.
func TestEditorToolsAreDescribed(t *testing.T) {
	v, _ := agentsScreen(t, twoAgents())
	for _, ts := range v.tools {
		if ts.about.Text == "" || ts.about.Text == "No description." {
			t.Errorf("%s: %q", ts.info.Name, ts.about.Text)
		}
	}
}

// TestDeleteDialogNamesItsAction: the confirmation says "Delete agent"
// and "Cancel", and Cancel deletes nothing.
func TestDeleteDialogNamesItsAction(t *testing.T) {
	core := twoAgents()
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	v.app.win.Resize(fyne.NewSize(800, 600))
	test.Tap(v.remove)
	overlay := v.app.win.Canvas().Overlays().Top()
	if v.deleting == nil || overlay == nil {
		t.Fatal("no confirmation")
	}
	findButton(t, overlay, "Delete agent")
	test.Tap(findButton(t, overlay, "Cancel"))
	ui.settle()
	if len(core.agents) != 2 {
		t.Errorf("Cancel deleted: %d agents left", len(core.agents))
	}
	test.Tap(v.remove)
	test.Tap(findButton(t, v.app.win.Canvas().Overlays().Top(), "Delete agent"))
	ui.settle()
	if len(core.agents) != 1 || v.editing.ID != "2" || !strings.Contains(v.status.Text, "Deleted assistant") {
		t.Errorf("after Delete agent: %d agents, editing %q, status %q", len(core.agents), v.editing.ID, v.status.Text)
	}
}

// TestEditorTabOrder: Tab goes through the form in reading order.
func TestEditorTabOrder(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	v.refresh()
	ui.settle()
	c := v.app.win.Canvas()
	for _, pair := range [][2]fyne.Focusable{{v.name, v.description}, {v.description, v.model}, {v.folders, v.reachable}} {
		c.Focus(pair[0])
		c.FocusNext()
		if c.Focused() != pair[1] {
			t.Errorf("Tab from %p went to %T, not the next field", pair[0], c.Focused())
		}
	}
}

// findButton finds the button with this text in o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Button:
			if o.Text == text && found == nil {
				found = o
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(o).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	if found == nil {
		t.Fatalf("no button %q", text)
	}
	return found
}

// TestTabBringsAFieldIntoView: a field that gets the focus below the fold
// scrolls into view.
func TestTabBringsAFieldIntoView(t *testing.T) {
	v, ui := agentsScreen(t, twoAgents())
	v.refresh()
	ui.settle()
	v.app.win.Resize(fyne.NewSize(640, 480))
	v.app.win.Canvas().Focus(v.schema)
	if v.form.Offset.Y <= 0 {
		t.Fatalf("the form stayed at %v with the answer format focused", v.form.Offset)
	}
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(v.schema).Y - d.AbsolutePositionForObject(v.form).Y
	if top < 0 || top+v.schema.Size().Height > v.form.Size().Height {
		t.Errorf("the answer format is at %v in a form %v high", top, v.form.Size().Height)
	}
	v.app.win.Canvas().Focus(v.name)
	if top := d.AbsolutePositionForObject(v.name).Y - d.AbsolutePositionForObject(v.form).Y; top < 0 || top > v.form.Size().Height/2 {
		t.Errorf("back to the name: it is at %v, the form at %v", top, v.form.Offset)
	}
}

// TestModelPickerDropsDown: the model picker (a SelectEntry of the
// editor's own, for its shortcuts) still drops its list down.
func TestModelPickerDropsDown(t *testing.T) {
	v, ui := agentsScreen(t, &fakeAgents{fakeProviders: editorProviders()})
	v.refresh()
	ui.settle()
	v.app.win.Resize(fyne.NewSize(800, 600))
	v.newAgent()
	ui.settle()
	if v.app.win.Canvas().Overlays().Top() != nil {
		t.Fatal("an overlay before the tap")
	}
	test.Tap(v.model.ActionItem.(*widget.Button))
	if v.app.win.Canvas().Overlays().Top() == nil {
		t.Error("no list of models drops down")
	}
}
