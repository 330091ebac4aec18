package desktop

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// agentsView lists the agents, each with its kill switch, and edits one.
// Edits are never lost without asking: leaving an agent with changes not
// saved (another agent, New agent) asks first.
type agentsView struct {
	app    *App
	core   Core
	list   *widget.List
	agents []agent.Agent

	editing agent.Agent // the agent in the editor; ID "" for a new one
	shown   int         // counts edit calls, so a late result knows the editor moved on
	// loading: edit is filling the fields, whose changes are then not the
	// person's; slugAuto: the slug follows the name (a new agent, until
	// the person types a slug); saving: a save is under way.
	loading, slugAuto, saving bool
	// servers is the tool servers' part of the editor (nil when a test
	// builds the tab without it).
	servers *agentServers
	started bool // the first refresh has shown an agent or the empty state

	heading                                      *widget.Label
	name, slug, description                      *editorEntry
	prompt, schema, folders, reachable, starters *editorEntry
	model                                        *editorSelectEntry
	tools                                        []toolSwitch
	runsOn, routing                              *widget.RadioGroup
	provider                                     *widget.Select
	providers                                    []agent.ProviderStatus
	modelsOf                                     string   // the provider whose models the picker lists (or is asking for)
	modelNames                                   []string // what it listed
	// asking: servers are asked for models only from the first refresh
	// (or Refresh) on, never while the window is being built.
	asking                                    bool
	clientNote                                *widget.Label
	modelHint, capabilities                   *note
	noModel                                   *note // the warning of an agent on a provider without a model
	conversations, enabled                    *widget.Check
	clientMayApprove                          *widget.Check
	logArguments                              *widget.Check // Agent.LogArguments
	team                                      *teamPicker   // Agent.Team
	whoAsked                                  *widget.Label
	schemaHint, slugHint, status              *note
	foldersHint, hostsHint                    *note
	save, remove, newAgentButton              *widget.Button
	root, editor, empty                       fyne.CanvasObject
	editorTabs                                *container.AppTabs // Settings, Try it
	emptyText                                 *widget.Label
	form                                      *container.Scroll
	leaving                                   *dialog.CustomDialog // "unsaved changes", while it shows
	keepEditing, discardChanges, saveAndLeave *widget.Button
	deleting                                  *dialog.ConfirmDialog // "Delete agent", while it shows

	pullButton, cancelPull *widget.Button
	pullBar                *widget.ProgressBar
	stopPull               context.CancelFunc

	try       *widget.Entry // "Try it": a message to the saved agent
	tryButton *widget.Button
	tryTurn   string        // the turn "Try it" follows
	tryAgent  string        // the ID of the agent it runs
	tryOutput *widget.Label // the agent's "Try it" transcript, the answer streaming
	tries     tryTranscripts

	icon *iconField // "Icon", in "Served as" (editor_icon.go)
}

// The "Runs on" choices: a provider's model, or the calling client's.
const (
	runsOnProvider = "a model of one of your model servers"
	runsOnClient   = "the calling client's model (sampling)"
)

// clientModelNote is what the editor says of running on the client's model.
const clientModelNote = "Runs on the model of the client that calls it, through MCP sampling. Only some clients lend their model (VS Code, GitHub Copilot CLI), and the 2026-07-28 protocol revision deprecates sampling; when the client lends none, the agent runs on the model server's model below."

func newAgentsView(app *App, core Core) *agentsView {
	v := &agentsView{app: app, core: core, tries: tryTranscripts{}}
	v.list = widget.NewList(
		func() int { return len(v.agents) },
		func() fyne.CanvasObject {
			label := widget.NewLabel("agent")
			label.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, widget.NewCheck("", nil), nil, label)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			label, check := row.Objects[0].(*widget.Label), row.Objects[1].(*widget.Check)
			ag := v.agents[i]
			label.SetText(agentLabel(ag))
			check.OnChanged = nil
			check.SetChecked(ag.Enabled)
			check.OnChanged = func(on bool) { v.setEnabled(ag.Slug, on) }
		})
	v.list.OnSelected = func(i widget.ListItemID) {
		if i >= 0 && i < len(v.agents) {
			v.pick(v.agents[i])
		}
	}

	v.heading = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.heading.Truncation = fyne.TextTruncateEllipsis
	v.name, v.slug, v.description = newEditorEntry(), newEditorEntry(), newEditorMultiLine(1)
	v.name.SetPlaceHolder("such as Researcher")
	v.description.SetPlaceHolder("what it does, for the clients that call it")
	v.slug.SetPlaceHolder("lower case, such as researcher")
	v.name.OnChanged = func(name string) {
		if v.slugAuto && !v.loading {
			v.setSlug(slugFromName(name))
		}
		v.changed()
	}
	v.model = newEditorSelectEntry()
	v.model.SetPlaceHolder("pick a model or type its name")
	v.model.OnChanged = func(picked string) {
		if v.modelNames != nil { // the server listed its models
			v.modelHint.SetText(pickHint(v.modelsOf, v.isOllama(v.modelsOf), v.modelNames, picked))
		}
		v.describeModel()
		v.changed()
	}
	v.modelHint, v.capabilities, v.clientNote = newNote(widget.MediumImportance), newNote(widget.MediumImportance), wrapped(clientModelNote)
	v.noModel = newNote(widget.WarningImportance)
	v.clientNote.Hide()
	v.runsOn = widget.NewRadioGroup([]string{runsOnProvider, runsOnClient}, func(choice string) {
		if (choice == runsOnClient) != v.clientNote.Visible() {
			v.clientNote.Hidden = choice != runsOnClient
			v.relayout()
		}
		v.changed()
	})
	v.runsOn.Required = true
	v.provider = widget.NewSelect(nil, func(name string) {
		v.loadModels(name)
		v.changed()
	})
	v.folders = newEditorMultiLine(2)
	v.folders.SetPlaceHolder("one per line, such as /home/ada/notes")
	v.reachable = newEditorMultiLine(2)
	v.reachable.SetPlaceHolder("host:port, one per line, such as nas.local:8080")
	v.starters = newEditorMultiLine(2)
	v.starters.SetPlaceHolder("one per line: clients offer them as prompts")
	for _, info := range core.Agents.AvailableTools() {
		v.tools = append(v.tools, newToolSwitch(info, v.changed))
	}
	v.prompt, v.schema = newEditorMultiLine(3), newEditorMultiLine(3)
	v.prompt.SetPlaceHolder("such as: You find sources on the web for a question and answer with links to them.")
	v.schema.SetPlaceHolder(`optional, such as {"type":"object","properties":{…}}`)
	v.schemaHint, v.slugHint, v.foldersHint, v.hostsHint = newNote(widget.DangerImportance), newNote(widget.DangerImportance), newNote(widget.DangerImportance), newNote(widget.DangerImportance)
	v.status = newNote(widget.MediumImportance)
	v.icon = newIconField(v)
	for _, n := range []*note{v.modelHint, v.capabilities, v.noModel, v.schemaHint, v.slugHint, v.foldersHint, v.hostsHint, v.status, v.icon.hint} {
		n.toggled = v.relayout
	}
	v.schema.OnChanged = func(s string) {
		v.schemaHint.SetText(schemaProblem(s))
		v.changed()
	}
	v.slug.OnChanged = func(s string) {
		if !v.loading {
			v.slugAuto = false // typed: it stays as typed
		}
		v.slugHint.SetText(slugProblem(s))
		v.changed()
	}
	v.folders.OnChanged = func(s string) {
		v.foldersHint.SetText(foldersProblem(s))
		v.changed()
	}
	v.reachable.OnChanged = func(s string) {
		v.hostsHint.SetText(hostsProblem(s))
		v.changed()
	}
	v.description.OnChanged = func(string) { v.changed() }
	v.prompt.OnChanged = func(string) { v.changed() }
	v.starters.OnChanged = func(string) { v.changed() }
	for _, e := range []*editorEntry{v.description, v.prompt, v.starters, v.folders, v.reachable, v.schema} {
		onChanged := e.OnChanged
		e.OnChanged = func(s string) {
			e.grow()
			onChanged(s)
		}
	}
	v.whoAsked = wrapped("")
	v.clientMayApprove = widget.NewCheck("the calling client may approve tool calls", func(bool) {
		v.showWhoIsAsked()
		v.changed()
	})
	v.routing = widget.NewRadioGroup(routingChoices(), func(words string) {
		if routingOf(words) == agent.RouteClient { // only a client asked can approve
			v.clientMayApprove.Enable()
		} else {
			v.clientMayApprove.Disable()
		}
		v.showWhoIsAsked()
		v.changed()
	})
	v.routing.Required = true
	v.logArguments = widget.NewCheck("Keep the arguments of calls and the answers to questions in the activity log", func(bool) { v.changed() })
	v.team = newTeamPicker(func() { v.changed() })
	changed := func(bool) { v.changed() }
	v.conversations = widget.NewCheck("keeps conversations: clients can go on where they left off", changed)
	v.enabled = widget.NewCheck("enabled: clients see it as a tool", changed)
	v.save = widget.NewButton("Save", v.saveEditor)
	v.save.Importance = widget.HighImportance
	v.remove = widget.NewButton("Delete…", v.confirmDelete)
	v.newAgentButton = widget.NewButton("New agent", v.newAgent)
	v.try, v.tryOutput = widget.NewEntry(), wrapped("")
	v.try.SetPlaceHolder("a message to the agent as saved; Enter sends")
	v.tryButton = widget.NewButton("Send", v.tryIt)
	v.try.OnSubmitted = func(string) { v.tryIt() }
	v.emptyText = wrapped("An agent is a helper with its own instructions, model and tools; your AI clients call it as a tool.")
	v.edit(newAgentDefaults())
	return v
}

// wrapped is a label whose text wraps in the editor's column.
func wrapped(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// note is a label in the editor's column that takes no room while it
// has nothing to say: a validation message next to its field, a hint,
// the status.
type note struct {
	widget.Label
	toggled func() // it showed, hid or took another number of lines: the editor lays out again
}

func newNote(importance widget.Importance) *note {
	n := &note{}
	n.ExtendBaseWidget(n)
	n.Wrapping, n.Importance = fyne.TextWrapWord, importance
	n.Hide()
	return n
}

// SetText shows the text, or hides the note when it is "".
func (n *note) SetText(text string) {
	if text == n.Text && (text == "") == n.Hidden {
		return
	}
	before := n.MinSize().Height
	n.Label.SetText(text)
	toggled := (text == "") != n.Hidden
	if text == "" {
		n.Hide()
	} else {
		n.Show()
	}
	if (toggled || n.MinSize().Height != before) && n.toggled != nil {
		n.toggled()
	}
}

// newAgentDefaults is what the editor shows for a new agent.
func newAgentDefaults() agent.Agent {
	return agent.Agent{Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Routing: agent.RouteClient, Conversations: true, Enabled: true}
}

// refresh re-reads the agents, and the providers off fyne's goroutine.
// The first one shows the first agent, or that there is none yet; later
// ones keep the agent shown, up to date when it has no unsaved changes.
func (v *agentsView) refresh() {
	v.agents = v.core.Agents.List()
	v.list.Refresh()
	v.asking = true
	v.loadProviders()
	switch {
	case !v.started:
		v.started = true
		if v.editing.ID == "" && !v.hasChanges() {
			v.showFirst()
		} else {
			v.showEditor() // the person is at work on one already
		}
	case v.editing.ID != "" && !v.hasChanges():
		// Changed elsewhere (the kill switch, the tray): show it as stored.
		if i := v.indexOf(v.editing.ID); i >= 0 && fieldsChanged(fieldsOf(v.editing), fieldsOf(v.agents[i])) {
			v.show(v.agents[i])
		}
	}
	v.selectShown()
}

// providersChanged re-reads the providers after one was saved or removed
// in Settings → Models, and asks the picked one for its models again (its
// address or key may be new).
func (v *agentsView) providersChanged() {
	v.modelsOf = ""
	v.loadProviders()
}

// loadProviders re-reads the providers for the provider select, off
// fyne's goroutine (Providers asks the keychain about each key).
func (v *agentsView) loadProviders() {
	v.app.background(func(context.Context) func() {
		ps := v.core.Providers.List()
		return func() {
			v.providers = ps
			v.showProvider(v.provider.Selected)
		}
	})
}

// showProvider selects a provider, listed even when the core does not
// know it (the core then says so on save), and lists its models.
func (v *agentsView) showProvider(name string) {
	name = cmp.Or(name, agent.OllamaProvider)
	names := make([]string, 0, len(v.providers)+1)
	for _, p := range v.providers {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, name) {
		names = append(names, name)
	}
	v.provider.SetOptions(names)
	v.provider.SetSelected(name) // lists its models when it changes
	v.loadModels(name)           // when it did not, and they are not listed yet
}

// loadModels lists a provider's models in the model picker, asking its
// server off fyne's goroutine; nothing when they are listed already, or
// before the first refresh.
func (v *agentsView) loadModels(name string) {
	if name == "" || name == v.modelsOf || !v.asking {
		return
	}
	v.modelsOf = name
	v.showPull()
	v.modelNames = nil
	v.model.SetOptions(nil)
	v.modelHint.SetText("Asking " + name + " for its models…")
	v.capabilities.SetText("")
	v.app.background(func(ctx context.Context) func() {
		names, err := v.core.Providers.Models(ctx, name)
		return func() {
			if v.modelsOf != name {
				return // another provider was picked meanwhile
			}
			if err != nil {
				v.modelHint.SetText("✖ " + agent.UserMessage(err) + " You can still type a model's name.")
				return
			}
			v.modelNames = names
			v.model.SetOptions(names)
			v.modelHint.SetText(pickHint(name, v.isOllama(name), names, v.model.Text))
			v.describeModel()
		}
	})
}

// showPull offers "Pull" only for the provider "ollama", the one the core
// downloads models to.
func (v *agentsView) showPull() {
	if v.pullButton == nil || v.stopPull != nil {
		return // not drawn yet, or pulling
	}
	if v.modelsOf == agent.OllamaProvider {
		v.pullButton.Show()
	} else {
		v.pullButton.Hide()
	}
}

// describeModel shows what the model in the picker can do, as its
// provider's server tells; a name it did not list is not asked about.
func (v *agentsView) describeModel() {
	provider, model := v.modelsOf, v.model.Text
	if model == "" || !slices.Contains(v.modelNames, model) {
		v.capabilities.SetText("")
		if model != "" && len(v.modelNames) > 0 {
			v.capabilities.SetText(provider + " did not list " + model + ": what it can do is unknown until it runs.")
		}
		return
	}
	v.capabilities.SetText("")
	v.app.background(func(ctx context.Context) func() {
		info, err := v.core.Providers.DescribeModel(ctx, provider, model)
		return func() {
			if v.modelsOf != provider || v.model.Text != model {
				return // the picker moved on
			}
			if err != nil {
				v.capabilities.SetText("What " + model + " can do is unknown: " + agent.UserMessage(err))
				return
			}
			v.capabilities.SetText(capabilitiesText(info))
		}
	})
}

// edit shows an agent in the editor, selected in the list (none for a
// new one). It does not ask about unsaved changes: pick and newAgent do.
func (v *agentsView) edit(a agent.Agent) {
	v.show(a)
	v.status.SetText("")
	v.showEditor()
	v.selectShown()
}

// show fills the editor with an agent: its fields, its "Try it"
// transcript. A new agent's slug follows its name until one is typed.
func (v *agentsView) show(a agent.Agent) {
	v.loading = true
	defer func() {
		v.loading = false
		v.changed()
	}()
	v.editing = a
	v.shown++
	v.slugAuto = a.ID == "" && (a.Slug == "" || a.Slug == slugFromName(a.Name))
	f := fieldsOf(a)
	v.name.SetText(f.Name)
	v.slug.SetText(f.Slug)
	v.description.SetText(f.Description)
	v.prompt.SetText(f.Prompt)
	v.showProvider(f.Provider)
	v.model.SetText(f.Model)
	v.schema.SetText(f.Schema)
	v.folders.SetText(f.Folders)
	v.reachable.SetText(f.ReachableHosts)
	v.starters.SetText(f.Starters)
	v.icon.set(f.Icon)
	for _, ts := range v.tools {
		ts.set(f.Tools)
	}
	if f.Backend == agent.BackendClient {
		v.runsOn.SetSelected(runsOnClient)
	} else {
		v.runsOn.SetSelected(runsOnProvider)
	}
	v.routing.SetSelected(routingWord(f.Routing))
	v.clientMayApprove.SetChecked(f.ClientMayApprove)
	v.logArguments.SetChecked(f.LogArguments)
	v.team.show(a, v.agents)
	v.conversations.SetChecked(f.Conversations)
	v.enabled.SetChecked(f.Enabled)
	v.showTries()
	if v.servers != nil {
		v.servers.show(a)
	}
}

// fields are the editor's values as they stand.
func (v *agentsView) fields() editorFields {
	f := editorFields{
		Name: v.name.Text, Slug: v.slug.Text, Description: v.description.Text, Prompt: v.prompt.Text,
		Model: v.model.Text, Schema: v.schema.Text, Folders: v.folders.Text, Starters: v.starters.Text, Tools: switchedOn(v.tools),
		ReachableHosts: v.reachable.Text, ClientMayApprove: v.clientMayApprove.Checked, LogArguments: v.logArguments.Checked,
		Backend: agent.BackendProvider, Provider: v.provider.Selected, Routing: routingOf(v.routing.Selected),
		Conversations: v.conversations.Checked, Enabled: v.enabled.Checked,
		Icon: v.icon.value(), Team: v.team.value(),
	}
	if v.runsOn.Selected == runsOnClient {
		f.Backend = agent.BackendClient
	}
	return f
}

// shownFields are the values of the agent shown, as the editor holds
// them: its tools in the editor's order, only those it offers.
func (v *agentsView) shownFields() editorFields {
	f := fieldsOf(v.editing)
	var tools []agent.AgentTool
	for _, ts := range v.tools {
		for _, t := range f.Tools {
			if t.Name == ts.info.Name {
				tools = append(tools, t)
			}
		}
	}
	f.Tools = tools
	return f
}

// hasChanges says whether the editor holds changes not saved.
func (v *agentsView) hasChanges() bool {
	return fieldsChanged(v.shownFields(), v.fields())
}

// changed follows an edit: the heading says whether there are unsaved
// changes, Save is offered only then, and the model's warning shows.
func (v *agentsView) changed() {
	if v.loading {
		return
	}
	changed := v.hasChanges()
	v.heading.SetText(editorHeading(v.editing, changed))
	if changed && !v.saving {
		v.save.Enable()
	} else {
		v.save.Disable()
	}
	if v.editing.ID == "" {
		v.remove.Disable()
	} else {
		v.remove.Enable()
	}
	v.noModel.SetText(noModelWarning(v.fields()))
}

// setSlug writes the slug derived from the name; it keeps following.
func (v *agentsView) setSlug(slug string) {
	v.loading = true
	v.slug.SetText(slug)
	v.loading = false
}

// showWhoIsAsked says in plain words who the editor's settings ask.
func (v *agentsView) showWhoIsAsked() {
	v.whoAsked.SetText(whoIsAsked(routingOf(v.routing.Selected), v.clientMayApprove.Checked))
}

// indexOf is the list row of the agent with this ID, or -1.
func (v *agentsView) indexOf(id string) int {
	return slices.IndexFunc(v.agents, func(a agent.Agent) bool { return a.ID == id })
}

// selectShown keeps the list's selection on the agent shown (none for a
// new one).
func (v *agentsView) selectShown() {
	if i := v.indexOf(v.editing.ID); v.editing.ID != "" && i >= 0 {
		v.list.Select(i) // its OnSelected finds it shown already
		return
	}
	v.list.UnselectAll()
}

// pick shows the agent clicked in the list, asking first when the
// editor holds unsaved changes.
func (v *agentsView) pick(a agent.Agent) {
	if a.ID != "" && a.ID == v.editing.ID {
		return
	}
	v.leave(func() {
		v.edit(a)
		v.showEditor()
		v.selectShown()
		v.toTop()
	})
}

// newAgent empties the editor for a new agent (after asking, when there
// are unsaved changes): no agent selected, "New agent" above, the
// cursor in Name.
func (v *agentsView) newAgent() {
	v.leave(func() {
		v.edit(newAgentDefaults())
		v.list.UnselectAll()
		v.showEditor()
		v.toTop()
		v.app.win.Canvas().Focus(v.name)
	})
}

// relayout lays the editor out again after a line of it showed or hid.
func (v *agentsView) relayout() {
	if v.editor != nil {
		v.editor.Refresh()
	}
}

// toTop scrolls the form back to its first field.
func (v *agentsView) toTop() {
	if v.form != nil {
		v.form.ScrollToTop()
	}
}

// showFirst shows the first agent, or that there is none yet.
func (v *agentsView) showFirst() {
	if len(v.agents) == 0 {
		v.edit(newAgentDefaults())
		v.showEmpty()
		return
	}
	v.edit(v.agents[0])
	v.showEditor()
}

// showEditor shows the editor rather than the empty state.
func (v *agentsView) showEditor() {
	if v.editor != nil {
		v.empty.Hide()
		v.editor.Show()
	}
}

// showEmpty says there is no agent yet, and offers to make one.
func (v *agentsView) showEmpty() {
	if v.editor != nil {
		v.editor.Hide()
		v.empty.Show()
	}
	v.list.UnselectAll()
}

// leave runs next now if the editor holds nothing unsaved; otherwise it
// asks first: keep editing, discard the changes, or save them and go on.
func (v *agentsView) leave(next func()) {
	if !v.hasChanges() {
		next()
		return
	}
	if v.leaving != nil {
		return // already asking
	}
	title := editorHeading(v.editing, false)
	text := wrapped("Your changes to " + title + " are not saved yet. Save them, discard them, or keep editing.")
	d := dialog.NewCustomWithoutButtons("Unsaved changes", text, v.app.win)
	closed := func() {
		v.leaving = nil
		d.Hide()
	}
	v.keepEditing = widget.NewButton("Keep editing", func() {
		closed()
		v.selectShown()
	})
	v.discardChanges = widget.NewButton("Discard changes", func() {
		closed()
		next()
	})
	v.discardChanges.Importance = widget.DangerImportance
	v.saveAndLeave = widget.NewButton("Save", func() {
		closed()
		v.selectShown()
		v.saveThen(next)
	})
	v.saveAndLeave.Importance = widget.HighImportance
	d.SetButtons([]fyne.CanvasObject{v.keepEditing, v.discardChanges, v.saveAndLeave})
	v.leaving = d
	// Escape keeps editing; Tab reaches the buttons, Space presses one.
	v.app.showDialog(d, func() {
		v.leaving = nil
		v.selectShown()
	})
}

// keys are the editor's shortcuts, the window's while the Agents tab
// shows: Ctrl+S saves, Ctrl+N starts a new agent (Cmd on macOS).
func (v *agentsView) keys(s fyne.Shortcut) {
	if !v.onScreen() {
		return
	}
	switch {
	case isShortcut(s, fyne.KeyS):
		if v.editor == nil || v.editor.Visible() {
			v.saveEditor()
		}
	case isShortcut(s, fyne.KeyN):
		v.newAgent()
	}
}

// onScreen says whether the Agents tab is the one showing.
func (v *agentsView) onScreen() bool {
	tabs := v.app.tabs
	if tabs == nil {
		return true
	}
	sel := tabs.Selected()
	return sel != nil && (sel.Content == v.root || strings.HasPrefix(sel.Text, "Agents"))
}

// saveEditor saves what the editor holds; the core validates and the
// server picks the change up at once. The core writes off fyne's
// goroutine; the editor stays usable meanwhile.
func (v *agentsView) saveEditor() {
	if v.saving || !v.hasChanges() {
		return
	}
	v.saveThen(nil)
}

// saveThen saves, then runs next (if any) once the agent is saved.
func (v *agentsView) saveThen(next func()) {
	f := v.fields()
	a, err := f.apply(v.editing)
	if err != nil {
		v.status.SetText("Not saved: " + agent.UserMessage(err))
		return
	}
	v.status.SetText("Saving " + agentLabel(a) + "…")
	v.saving = true
	v.save.Disable()
	shown := v.shown
	v.app.background(func(ctx context.Context) func() {
		saved, err := v.core.Agents.Save(ctx, a)
		return func() {
			v.saving = false
			if v.shown != shown {
				v.refresh()
				return // the editor moved on to another agent
			}
			if err != nil {
				v.status.SetText("Not saved: " + agent.UserMessage(err))
				v.changed()
				return
			}
			if fieldsChanged(f, v.fields()) {
				v.editing = saved // typed on while saving: those changes stay unsaved
				v.slugAuto = false
			} else {
				v.show(saved) // as the core stored it
			}
			v.refresh()
			msg := "Saved " + agentLabel(saved) + "."
			if warning := noModelWarning(f); warning != "" {
				msg += " " + warning
			}
			v.status.SetText(msg)
			v.changed()
			if next != nil {
				next()
			}
		}
	})
}

// confirmDelete asks before deleting the agent being edited, with its
// conversations.
func (v *agentsView) confirmDelete() {
	a := v.editing
	if a.ID == "" {
		v.status.SetText("Nothing to delete: this agent is not saved.")
		return
	}
	text := "Delete " + agentLabel(a) + " and all its conversations? Clients lose its tool at once. This cannot be undone."
	if v.hasChanges() {
		text += " Your unsaved changes to it are lost too."
	}
	v.deleting = dialog.NewCustomConfirm("Delete "+a.Name+"?", "Delete agent", "Cancel", wrapped(text),
		func(ok bool) {
			v.deleting = nil
			if ok {
				v.deleteAgent(a.Slug)
			}
		}, v.app.win)
	v.deleting.Resize(fyne.NewSize(420, 0))
	v.app.showDialog(v.deleting, nil)
}

// deleteAgent deletes the agent off fyne's goroutine, then shows the
// first agent left (or none) if the editor still shows it.
func (v *agentsView) deleteAgent(slug string) {
	v.status.SetText("Deleting " + slug + "…")
	shown := v.shown
	v.app.background(func(ctx context.Context) func() {
		err := v.core.Agents.Delete(ctx, slug)
		return func() {
			if err != nil {
				v.refresh()
				v.status.SetText("Not deleted: " + agent.UserMessage(err))
				return
			}
			if v.shown == shown {
				v.editing = newAgentDefaults() // gone: nothing of it to keep
				v.refresh()
				v.showFirst()
				v.selectShown()
			} else {
				v.refresh()
			}
			v.status.SetText("Deleted " + slug + ".")
		}
	})
}

// setEnabled is the kill switch: a disabled agent leaves the tool list.
// The core writes off fyne's goroutine; its agents_changed event redraws
// the list, and a refusal puts the switch back.
func (v *agentsView) setEnabled(slug string, on bool) {
	v.app.background(func(ctx context.Context) func() {
		err := v.core.Agents.SetEnabled(ctx, slug, on)
		if err == nil {
			return nil
		}
		return func() {
			v.refresh()
			v.status.SetText(agent.UserMessage(err))
		}
	})
}

// refreshModels asks the selected provider for its models again.
func (v *agentsView) refreshModels() {
	v.asking = true
	v.modelsOf = ""
	v.loadModels(v.provider.Selected)
}

// toolSwitch turns one tool on for the agent, says in a line what it
// does, and whether it asks before each call.
type toolSwitch struct {
	info     agent.ToolInfo
	use, ask *widget.Check
	about    *widget.Label
}

func newToolSwitch(info agent.ToolInfo, changed func()) toolSwitch {
	ts := toolSwitch{info: info, use: widget.NewCheck(info.Name, nil), ask: widget.NewCheck("ask me first", nil),
		about: wrapped(cmp.Or(info.Description, "No description."))}
	ts.about.Importance = widget.LowImportance
	ts.use.OnChanged = func(on bool) {
		if on {
			ts.ask.SetChecked(info.NeedsApproval)
			ts.ask.Enable()
		} else {
			ts.ask.Disable()
		}
		changed()
	}
	ts.ask.OnChanged = func(bool) { changed() }
	ts.ask.Disable()
	return ts
}

// set shows the agent's setting of this tool.
func (ts toolSwitch) set(tools []agent.AgentTool) {
	for _, t := range tools {
		if t.Name == ts.info.Name {
			ts.use.SetChecked(true)
			ts.ask.SetChecked(t.NeedsApproval)
			return
		}
	}
	ts.use.SetChecked(false)
	ts.ask.SetChecked(ts.info.NeedsApproval)
}

func switchedOn(switches []toolSwitch) []agent.AgentTool {
	var out []agent.AgentTool
	for _, ts := range switches {
		if ts.use.Checked {
			out = append(out, agent.AgentTool{Name: ts.info.Name, NeedsApproval: ts.ask.Checked})
		}
	}
	return out
}

// tryIt sends the message to the saved agent from the desktop and empties
// the input; the answer streams into the agent's "Try it" transcript.
func (v *agentsView) tryIt() {
	if v.editing.ID == "" {
		v.tryOutput.SetText("Save the agent first.")
		return
	}
	msg := strings.TrimSpace(v.try.Text)
	if msg == "" || v.tryTurn != "" {
		return // nothing to send, or an answer is still coming
	}
	turn, id, slug := uuid.NewString(), v.editing.ID, v.editing.Slug
	v.tryTurn, v.tryAgent = turn, id
	v.app.watch.turn(turn)
	v.tries.start(id, msg)
	v.try.SetText("")
	v.tryButton.Disable()
	v.showTries()
	v.app.background(func(ctx context.Context) func() {
		res, err := v.core.Conversations.Run(ctx, agent.RunRequest{Agent: slug, Principal: agent.LocalPrincipal, Message: msg, TurnID: turn})
		return func() {
			if v.tryTurn != turn {
				return
			}
			v.tryTurn = "" // finished: late events change nothing
			v.tryButton.Enable()
			if err != nil {
				v.tries.finish(id, "✖ "+tryError(err))
			} else {
				v.tries.finish(id, res.Text)
			}
			v.showTries()
		}
	})
}

// tryEvent streams the "Try it" turn's text as the model writes it.
func (v *agentsView) tryEvent(e agent.Event) {
	if e.Kind != agent.EventDelta || e.Turn != v.tryTurn || v.tryTurn == "" {
		return
	}
	v.tries.stream(v.tryAgent, e.Text)
	v.showTries()
}

// showTries shows the "Try it" transcript of the agent in the editor;
// Send waits while an answer is still coming.
func (v *agentsView) showTries() {
	v.tryOutput.SetText(v.tries.text(v.editing.ID, cmp.Or(v.editing.Slug, "agent")))
	if v.tryTurn != "" {
		v.tryButton.Disable()
	} else {
		v.tryButton.Enable()
	}
}

// pullModel downloads the model named in the picker, with a progress bar
// and a cancel button; Ollama is asked off fyne's goroutine.
func (v *agentsView) pullModel() {
	name := v.model.Text
	ctx, cancel := context.WithCancel(v.app.ctx) // the Cancel button's, and the App's
	v.stopPull = cancel
	v.pullButton.Hide()
	v.cancelPull.Show()
	v.pullBar.SetValue(0)
	v.pullBar.Show()
	v.status.SetText("Pulling " + name + "…")
	v.app.background(func(context.Context) func() {
		err := v.core.Providers.PullModel(ctx, name, func(p agent.PullProgress) {
			v.app.onUI(func() {
				if p.Total > 0 {
					v.pullBar.SetValue(float64(p.Completed) / float64(p.Total))
				}
				v.status.SetText(name + ": " + p.Status)
			})
		})
		cancelled := ctx.Err() != nil
		cancel()
		return func() {
			v.stopPull = nil
			v.pullBar.Hide()
			v.cancelPull.Hide()
			v.showPull()
			switch {
			case cancelled:
				v.status.SetText("Pull of " + name + " cancelled.")
			case err != nil:
				v.status.SetText(agent.UserMessage(err))
			default:
				v.status.SetText("Pulled " + name + ".")
				v.refreshModels()
			}
		}
	})
}

// tryError is why Try it got no answer, in the window's words.
func tryError(err error) string {
	if errors.Is(err, agent.ErrNoModel) {
		return "It has no model yet: pick one under Model, Save, then try again."
	}
	return agent.UserMessage(err)
}

// showTry brings Try it forward with the keyboard in its message box.
func (v *agentsView) showTry() {
	if v.editorTabs != nil {
		v.editorTabs.SelectIndex(1)
	}
	v.app.win.Canvas().Focus(v.try)
}
