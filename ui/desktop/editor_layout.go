package desktop

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// content lays the Agents tab out: the list on the left with New agent
// below; on the right the agent's heading, its form in sections (read
// and tabbed through top to bottom), Save and Delete with the status,
// and "Try it". Labels sit above their fields and wrap, so the tab fits
// a narrow window.
func (v *agentsView) content() fyne.CanvasObject {
	refresh := widget.NewButton("Refresh", v.refreshModels)
	v.pullButton = widget.NewButton("Pull", v.pullModel)
	v.cancelPull = widget.NewButton("Cancel", func() {
		if v.stopPull != nil {
			v.stopPull()
		}
	})
	v.cancelPull.Hide()
	v.pullBar = widget.NewProgressBar()
	v.pullBar.Hide()
	v.showPull()

	v.form = container.NewVScroll(nil)
	for _, e := range []*editorEntry{v.name, v.description, v.prompt, v.starters, v.folders, v.reachable, v.slug, v.schema, v.icon.entry} {
		e.focused = func() { v.reveal(e) }
	}
	v.model.focused = func() { v.reveal(v.model) }
	in := func(e fyne.CanvasObject) fyne.CanvasObject { return underWheel(e, v.form) }
	toolRows := container.NewVBox()
	for _, ts := range v.tools {
		toolRows.Add(container.NewBorder(nil, ts.about, nil, ts.ask, ts.use))
	}
	// What every agent needs comes first, labels beside the fields, so
	// that a small screen (1024×768, or 1.5×) shows it unscrolled; the
	// instructions last of them, as they grow with their text.
	model := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(refresh, v.pullButton, v.cancelPull), in(v.model)),
		v.pullBar, v.noModel, v.modelHint, v.capabilities)
	v.form.Content = container.NewVBox(
		widget.NewForm(
			widget.NewFormItem("Name", in(v.name)),
			widget.NewFormItem("Description", in(v.description)),
			widget.NewFormItem("Model", model),
			widget.NewFormItem("Instructions", in(v.prompt)),
		),
		section("Where it runs",
			field("Runs on", v.runsOn, v.clientNote),
			field("Model server", v.provider),
		),
		section("Starter prompts",
			field("Messages a client can offer to start a conversation, one a line", in(v.starters)),
		),
		section("Tools and folders",
			toolRows,
			v.serversPart(),
			field("Team: agents it may hand work to; each is a tool named agent_ and its slug, and answers in a conversation of its own", v.team.box),
			field("Folders the file tools may use", in(v.folders), v.foldersHint),
			field("Hosts on your network it may reach (empty: the public internet only)", in(v.reachable), v.hostsHint),
		),
		section("Questions and approvals",
			field("When the agent has a question, who is asked", v.routing),
			v.clientMayApprove, v.whoAsked,
			v.logArguments,
			wrapped("Secrets such as tokens and keys are never kept. The log keeps the time, the client and the outcome of every call either way."),
		),
		section("Served as",
			field("Tool name (slug): what clients call it", in(v.slug), v.slugHint),
			field("Answer format (JSON Schema)", in(v.schema), v.schemaHint),
			field("Icon: how clients show it (an emoji, or a PNG, JPEG or SVG image of at most 64 KiB)", in(v.icon.box), v.icon.hint),
			v.conversations, v.enabled,
		),
	)

	// The settings and Try it each have the editor's whole height: the
	// action bar stays below the form, the message box below the
	// conversation, as in a chat app.
	// The heading (the agent, and whether it has unsaved changes) sits
	// beside Save, which it is about, not above the tabs: the form keeps
	// that height.
	buttons := container.NewBorder(nil, nil, v.save, v.remove, v.heading)
	settings := container.NewBorder(nil, container.NewVBox(widget.NewSeparator(), buttons, v.status), nil, nil, v.form)
	tryIt := container.NewBorder(nil, container.NewBorder(nil, nil, nil, v.tryButton, v.try), nil, nil, container.NewVScroll(v.tryOutput))
	v.editorTabs = container.NewAppTabs(container.NewTabItem("Settings", settings), container.NewTabItem("Try it", tryIt))
	v.editor = v.editorTabs

	start := widget.NewButton("New agent", v.newAgent)
	start.Importance = widget.HighImportance
	v.empty = container.NewVBox(heading("No agents yet"), v.emptyText, container.NewHBox(start))
	if v.started {
		v.showFirst()
	} else { // until the first refresh has read the agents
		v.editor.Hide()
		v.empty.Hide()
	}

	v.root = container.NewHSplit(container.NewBorder(nil, v.newAgentButton, nil, nil, v.list), container.NewStack(v.editor, v.empty))
	v.root.(*container.Split).Offset = 0.3

	canvas := v.app.win.Canvas()
	for _, key := range []fyne.KeyName{fyne.KeyS, fyne.KeyN} {
		canvas.AddShortcut(&desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}, v.keys)
	}
	return v.root
}

// reveal scrolls the form so that a field of it shows whole (or its top,
// when it is taller than the form).
func (v *agentsView) reveal(o fyne.CanvasObject) {
	if v.form == nil || v.form.Content == nil || !v.form.Visible() {
		return
	}
	d := fyne.CurrentApp().Driver()
	top := d.AbsolutePositionForObject(o).Y - d.AbsolutePositionForObject(v.form.Content).Y
	view := v.form.Size().Height
	bottom := top + o.Size().Height
	switch {
	case view <= 0:
	case top < v.form.Offset.Y:
		// with the label above the field in view too
		v.form.ScrollToOffset(fyne.NewPos(0, max(0, top-labelRoom)))
	case bottom > v.form.Offset.Y+view:
		v.form.ScrollToOffset(fyne.NewPos(0, min(top, bottom-view)))
	}
}

// labelRoom is about the height of a field's label, kept in view above
// a field scrolled to.
const labelRoom = 40

// section is a group of the form under a bold heading.
func section(title string, objects ...fyne.CanvasObject) fyne.CanvasObject {
	return container.NewVBox(append([]fyne.CanvasObject{widget.NewSeparator(), heading(title)}, objects...)...)
}

// heading is a section's title.
func heading(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// field is a label above its control, then what is said of it.
func field(label string, objects ...fyne.CanvasObject) fyne.CanvasObject {
	return container.NewVBox(append([]fyne.CanvasObject{wrapped(label)}, objects...)...)
}

// serversPart is the tool servers' part of the form; empty for an
// Agents tab tested without it.
func (v *agentsView) serversPart() fyne.CanvasObject {
	if v.servers == nil {
		return container.NewVBox()
	}
	return v.servers.content()
}

// isOllama says whether the provider is an Ollama server (the one whose
// models Deskhand can pull).
func (v *agentsView) isOllama(name string) bool {
	for _, p := range v.providers {
		if p.Name == name {
			return p.Kind == agent.ProviderOllama
		}
	}
	return name == agent.OllamaProvider
}
