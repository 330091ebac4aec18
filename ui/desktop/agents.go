package desktop

import (
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// agentsCore is what the Agents tab needs of the core: the agents, their
// editor and kill switch, the tools they may use, the providers and their
// models (pulling one for Ollama's), and "Try it".
type agentsCore interface {
	Agents() []agent.Agent
	AvailableTools() []agent.ToolInfo
	SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetAgentEnabled(ctx context.Context, slug string, enabled bool) error
	DeleteAgent(ctx context.Context, slug string) error
	Providers() []agent.ProviderStatus
	ProviderModels(ctx context.Context, provider string) ([]string, error)
	DescribeModel(ctx context.Context, provider, model string) (agent.ModelInfo, error)
	PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error
	Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error)
}

// agentsView lists the agents, each with its kill switch, and edits one.
type agentsView struct {
	app    *App
	core   agentsCore
	list   *widget.List
	agents []agent.Agent

	editing                                 agent.Agent // the agent in the editor; ID "" for a new one
	shown                                   int         // counts edit calls, so a late result knows the editor moved on
	name, slug, description, prompt, schema *widget.Entry
	model                                   *widget.SelectEntry
	folders, reachable                      *widget.Entry
	starters                                *widget.Entry
	tools                                   []toolSwitch
	runsOn                                  *widget.RadioGroup
	provider, routing                       *widget.Select
	providers                               []agent.ProviderStatus
	modelsOf                                string   // the provider whose models the picker lists (or is asking for)
	modelNames                              []string // what it listed
	// asking: servers are asked for models only from the first refresh
	// (or Refresh) on, never while the window is being built.
	asking                                 bool
	modelHint, capabilities, clientNote    *widget.Label
	conversations, enabled                 *widget.Check
	clientMayApprove                       *widget.Check
	schemaHint, slugHint, status, whoAsked *widget.Label
	save, remove                           *widget.Button

	pullButton, cancelPull *widget.Button
	pullBar                *widget.ProgressBar
	stopPull               context.CancelFunc

	try       *widget.Entry // "Try it": a message to the saved agent
	tryButton *widget.Button
	tryTurn   string        // the turn "Try it" follows
	tryOutput *widget.Label // its answer as it streams
}

// The "Runs on" choices: a provider's model, or the calling client's.
const (
	runsOnProvider = "a provider's model"
	runsOnClient   = "the calling client's model (sampling)"
)

// clientModelNote is what the editor says of running on the client's model.
const clientModelNote = "Runs on the model of the client that calls it, through MCP sampling. Only some clients lend their model (VS Code, GitHub Copilot CLI), and the 2026-07-28 protocol revision deprecates sampling; when the client lends none, the agent runs on the provider model below."

var (
	routingChoices = []string{string(agent.RouteClient), string(agent.RouteDesktop), string(agent.RouteDecline)}
)

func newAgentsView(app *App, core agentsCore) *agentsView {
	v := &agentsView{app: app, core: core}
	v.list = widget.NewList(
		func() int { return len(v.agents) },
		func() fyne.CanvasObject {
			return container.NewBorder(nil, nil, widget.NewCheck("", nil), nil, widget.NewLabel("agent"))
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
	v.list.OnSelected = func(i widget.ListItemID) { v.edit(v.agents[i]) }

	v.name, v.slug, v.description = widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	v.model = widget.NewSelectEntry(nil)
	v.model.SetPlaceHolder("pick one the provider lists, or type a model's name")
	v.model.OnChanged = func(string) { v.describeModel() }
	v.modelHint, v.capabilities, v.clientNote = widget.NewLabel(""), widget.NewLabel(""), widget.NewLabel(clientModelNote)
	v.modelHint.Wrapping, v.capabilities.Wrapping, v.clientNote.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord, fyne.TextWrapWord
	v.clientNote.Hide()
	v.runsOn = widget.NewRadioGroup([]string{runsOnProvider, runsOnClient}, func(choice string) {
		if choice == runsOnClient {
			v.clientNote.Show()
		} else {
			v.clientNote.Hide()
		}
	})
	v.runsOn.Required = true
	v.provider = widget.NewSelect(nil, func(name string) { v.loadModels(name) })
	v.folders = widget.NewMultiLineEntry()
	v.folders.SetPlaceHolder("folders the file tools may use, one per line")
	v.reachable = widget.NewMultiLineEntry()
	v.reachable.SetPlaceHolder("host:port, one per line, such as nas.local:8080; empty: the public internet only")
	v.starters = widget.NewMultiLineEntry()
	v.starters.SetPlaceHolder("messages to start with, one per line: clients offer them as prompts")
	for _, info := range core.AvailableTools() {
		v.tools = append(v.tools, newToolSwitch(info))
	}
	v.prompt, v.schema = widget.NewMultiLineEntry(), widget.NewMultiLineEntry()
	v.prompt.SetMinRowsVisible(4)
	v.schema.SetMinRowsVisible(3)
	v.schema.SetPlaceHolder(`optional JSON Schema of the answer, e.g. {"type":"object","properties":{…}}`)
	v.schemaHint, v.status = widget.NewLabel(""), widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.schema.OnChanged = func(s string) { v.schemaHint.SetText(schemaProblem(s)) }
	v.slugHint = widget.NewLabel("")
	v.slug.OnChanged = func(s string) { v.slugHint.SetText(slugProblem(s)) }
	v.whoAsked = widget.NewLabel("")
	v.whoAsked.Wrapping = fyne.TextWrapWord
	v.clientMayApprove = widget.NewCheck("the calling client may approve tool calls", nil)
	v.routing = widget.NewSelect(routingChoices, func(string) { v.showWhoIsAsked() })
	v.clientMayApprove.OnChanged = func(bool) { v.showWhoIsAsked() }
	v.conversations, v.enabled = widget.NewCheck("keeps conversations", nil), widget.NewCheck("enabled (served as a tool)", nil)
	v.save = widget.NewButton("Save", v.saveEditor)
	v.remove = widget.NewButton("Delete…", v.confirmDelete)
	v.try, v.tryOutput = widget.NewEntry(), widget.NewLabel("")
	v.try.SetPlaceHolder("Try it: a message to this agent (save first)")
	v.tryOutput.Wrapping = fyne.TextWrapWord
	v.tryButton = widget.NewButton("Send", v.tryIt)
	v.try.OnSubmitted = func(string) { v.tryIt() }
	v.edit(newAgentDefaults())
	return v
}

// newAgentDefaults is what the editor shows for a new agent.
func newAgentDefaults() agent.Agent {
	return agent.Agent{Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Routing: agent.RouteClient, Conversations: true, Enabled: true}
}

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
	toolRows := container.NewVBox()
	for _, ts := range v.tools {
		toolRows.Add(container.NewHBox(ts.use, ts.ask))
	}
	form := widget.NewForm(
		widget.NewFormItem("Name", v.name),
		widget.NewFormItem("Slug (tool name)", container.NewVBox(v.slug, v.slugHint)),
		widget.NewFormItem("Description", v.description),
		widget.NewFormItem("Prompt", v.prompt),
		widget.NewFormItem("Runs on", container.NewVBox(v.runsOn, v.clientNote)),
		widget.NewFormItem("Provider", v.provider),
		widget.NewFormItem("Model", container.NewVBox(
			container.NewBorder(nil, nil, nil, container.NewHBox(refresh, v.pullButton, v.cancelPull), v.model),
			v.pullBar, v.modelHint, v.capabilities)),
		widget.NewFormItem("Tools", toolRows),
		widget.NewFormItem("Allowed folders", v.folders),
		widget.NewFormItem("May reach these hosts on my network", v.reachable),
		widget.NewFormItem("Starter prompts", v.starters),
		widget.NewFormItem("Questions go to", container.NewVBox(v.routing, v.clientMayApprove, v.whoAsked)),
		widget.NewFormItem("Response schema", container.NewVBox(v.schema, v.schemaHint)),
		widget.NewFormItem("", container.NewVBox(v.conversations, v.enabled)),
	)
	newAgent := widget.NewButton("New agent", func() {
		v.list.UnselectAll()
		v.edit(newAgentDefaults())
	})
	tryIt := container.NewVBox(container.NewBorder(nil, nil, nil, v.tryButton, v.try), v.tryOutput)
	buttons := container.NewBorder(nil, nil, nil, v.remove, v.save)
	editor := container.NewBorder(nil, container.NewVBox(buttons, v.status, widget.NewSeparator(), tryIt), nil, nil, container.NewVScroll(form))
	split := container.NewHSplit(container.NewBorder(nil, newAgent, nil, nil, v.list), editor)
	split.Offset = 0.3
	return split
}

// refresh re-reads the agents, and the providers off fyne's goroutine.
func (v *agentsView) refresh() {
	v.agents = v.core.Agents()
	v.list.Refresh()
	v.asking = true
	v.loadProviders()
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
		ps := v.core.Providers()
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
		names, err := v.core.ProviderModels(ctx, name)
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
			v.modelHint.SetText(providerModelsFound(name, len(names)))
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
		info, err := v.core.DescribeModel(ctx, provider, model)
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

// edit shows an agent in the editor.
func (v *agentsView) edit(a agent.Agent) {
	v.editing = a
	v.shown++
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
	for _, ts := range v.tools {
		ts.set(f.Tools)
	}
	if f.Backend == agent.BackendClient {
		v.runsOn.SetSelected(runsOnClient)
	} else {
		v.runsOn.SetSelected(runsOnProvider)
	}
	v.routing.SetSelected(string(f.Routing))
	v.clientMayApprove.SetChecked(f.ClientMayApprove)
	v.conversations.SetChecked(f.Conversations)
	v.enabled.SetChecked(f.Enabled)
	v.status.SetText("")
}

// showWhoIsAsked says in plain words who the editor's settings ask.
func (v *agentsView) showWhoIsAsked() {
	v.whoAsked.SetText(whoIsAsked(agent.Routing(v.routing.Selected), v.clientMayApprove.Checked))
}

// saveEditor saves what the editor holds; the core validates and the
// server picks the change up at once. The core writes off fyne's
// goroutine; the editor stays usable meanwhile.
func (v *agentsView) saveEditor() {
	f := editorFields{
		Name: v.name.Text, Slug: v.slug.Text, Description: v.description.Text, Prompt: v.prompt.Text,
		Model: v.model.Text, Schema: v.schema.Text, Folders: v.folders.Text, Starters: v.starters.Text, Tools: switchedOn(v.tools),
		ReachableHosts: v.reachable.Text, ClientMayApprove: v.clientMayApprove.Checked,
		Backend: agent.BackendProvider, Provider: v.provider.Selected, Routing: agent.Routing(v.routing.Selected),
		Conversations: v.conversations.Checked, Enabled: v.enabled.Checked,
	}
	if v.runsOn.Selected == runsOnClient {
		f.Backend = agent.BackendClient
	}
	a, err := f.apply(v.editing)
	if err != nil {
		v.status.SetText("Not saved: " + agent.UserMessage(err))
		return
	}
	v.status.SetText("Saving " + agentLabel(a) + "…")
	v.save.Disable()
	shown := v.shown
	v.app.background(func(ctx context.Context) func() {
		saved, err := v.core.SaveAgent(ctx, a)
		return func() {
			v.save.Enable()
			v.refresh()
			if v.shown != shown {
				return // the editor moved on to another agent
			}
			if err != nil {
				v.status.SetText("Not saved: " + agent.UserMessage(err))
				return
			}
			v.editing = saved
			v.status.SetText("Saved " + agentLabel(saved) + ".")
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
	dialog.ShowConfirm("Delete "+a.Name+"?",
		"Delete the agent "+agentLabel(a)+" and all its conversations? Clients lose its tool at once. This cannot be undone.",
		func(ok bool) {
			if ok {
				v.deleteAgent(a.Slug)
			}
		}, v.app.win)
}

// deleteAgent deletes the agent off fyne's goroutine, then empties the
// editor if it still shows it.
func (v *agentsView) deleteAgent(slug string) {
	v.status.SetText("Deleting " + slug + "…")
	shown := v.shown
	v.app.background(func(ctx context.Context) func() {
		err := v.core.DeleteAgent(ctx, slug)
		return func() {
			v.refresh()
			if err != nil {
				v.status.SetText("Not deleted: " + agent.UserMessage(err))
				return
			}
			if v.shown == shown {
				v.list.UnselectAll()
				v.edit(newAgentDefaults())
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
		err := v.core.SetAgentEnabled(ctx, slug, on)
		if err == nil {
			return nil
		}
		return func() {
			v.status.SetText(agent.UserMessage(err))
			v.refresh()
		}
	})
}

// refreshModels asks the selected provider for its models again.
func (v *agentsView) refreshModels() {
	v.asking = true
	v.modelsOf = ""
	v.loadModels(v.provider.Selected)
}

// toolSwitch turns one tool on for the agent, and says whether it asks
// before each call.
type toolSwitch struct {
	info     agent.ToolInfo
	use, ask *widget.Check
}

func newToolSwitch(info agent.ToolInfo) toolSwitch {
	ts := toolSwitch{info: info, use: widget.NewCheck(info.Name, nil), ask: widget.NewCheck("ask me first", nil)}
	ts.use.OnChanged = func(on bool) {
		if on {
			ts.ask.SetChecked(info.NeedsApproval)
			ts.ask.Enable()
		} else {
			ts.ask.Disable()
		}
	}
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

// tryIt sends the message to the saved agent from the desktop; the answer
// streams into the editor.
func (v *agentsView) tryIt() {
	if v.editing.ID == "" {
		v.tryOutput.SetText("Save the agent first.")
		return
	}
	msg := v.try.Text
	turn := uuid.NewString()
	v.tryTurn = turn
	v.tryOutput.SetText("…")
	v.tryButton.Disable()
	slug := v.editing.Slug
	v.app.background(func(ctx context.Context) func() {
		res, err := v.core.Run(ctx, agent.RunRequest{Agent: slug, Principal: agent.LocalPrincipal, Message: msg, TurnID: turn})
		return func() {
			v.tryButton.Enable()
			if v.tryTurn != turn {
				return
			}
			v.tryTurn = "" // finished: late events change nothing
			if err != nil {
				v.tryOutput.SetText(agent.UserMessage(err))
				return
			}
			v.tryOutput.SetText(res.Text)
		}
	})
}

// tryEvent streams the "Try it" turn's text as the model writes it.
func (v *agentsView) tryEvent(e agent.Event) {
	if e.Kind != agent.EventDelta || e.Turn != v.tryTurn || v.tryTurn == "" {
		return
	}
	if v.tryOutput.Text == "…" {
		v.tryOutput.SetText("")
	}
	v.tryOutput.SetText(v.tryOutput.Text + e.Text)
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
		err := v.core.PullModel(ctx, name, func(p agent.PullProgress) {
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
