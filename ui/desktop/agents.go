package desktop

import (
	"context"

	"github.com/google/uuid"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// agentsCore is what the Agents tab needs of the core: the agents, their
// editor and kill switch, the tools they may use, Ollama's models, and
// "Try it".
type agentsCore interface {
	Agents() []agent.Agent
	AvailableTools() []agent.ToolInfo
	SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetAgentEnabled(ctx context.Context, slug string, enabled bool) error
	DeleteAgent(ctx context.Context, slug string) error
	InstalledModels(ctx context.Context) ([]string, error)
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
	backend, routing                        *widget.Select
	conversations, enabled                  *widget.Check
	clientMayApprove                        *widget.Check
	schemaHint, slugHint, status, whoAsked  *widget.Label
	save, remove                            *widget.Button

	pullButton, cancelPull *widget.Button
	pullBar                *widget.ProgressBar
	stopPull               context.CancelFunc

	try       *widget.Entry // "Try it": a message to the saved agent
	tryButton *widget.Button
	tryTurn   string        // the turn "Try it" follows
	tryOutput *widget.Label // its answer as it streams
}

var (
	backendChoices = []string{string(agent.BackendOllama), string(agent.BackendClient)}
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
	v.model.SetPlaceHolder("e.g. llama3.2 — refresh to list the installed ones")
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
	v.backend = widget.NewSelect(backendChoices, nil)
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
	v.edit(agent.Agent{Backend: agent.BackendOllama, Routing: agent.RouteClient, Conversations: true, Enabled: true})
	return v
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
		widget.NewFormItem("Model backend", v.backend),
		widget.NewFormItem("Ollama model", container.NewVBox(
			container.NewBorder(nil, nil, nil, container.NewHBox(refresh, v.pullButton, v.cancelPull), v.model), v.pullBar)),
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
		v.edit(agent.Agent{Backend: agent.BackendOllama, Routing: agent.RouteClient, Conversations: true, Enabled: true})
	})
	tryIt := container.NewVBox(container.NewBorder(nil, nil, nil, v.tryButton, v.try), v.tryOutput)
	buttons := container.NewBorder(nil, nil, nil, v.remove, v.save)
	editor := container.NewBorder(nil, container.NewVBox(buttons, v.status, widget.NewSeparator(), tryIt), nil, nil, container.NewVScroll(form))
	split := container.NewHSplit(container.NewBorder(nil, newAgent, nil, nil, v.list), editor)
	split.Offset = 0.3
	return split
}

// refresh re-reads the agents.
func (v *agentsView) refresh() {
	v.agents = v.core.Agents()
	v.list.Refresh()
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
	v.model.SetText(f.Model)
	v.schema.SetText(f.Schema)
	v.folders.SetText(f.Folders)
	v.reachable.SetText(f.ReachableHosts)
	v.starters.SetText(f.Starters)
	for _, ts := range v.tools {
		ts.set(f.Tools)
	}
	v.backend.SetSelected(string(f.Backend))
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
		Backend: agent.Backend(v.backend.Selected), Routing: agent.Routing(v.routing.Selected),
		Conversations: v.conversations.Checked, Enabled: v.enabled.Checked,
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
				v.edit(agent.Agent{Backend: agent.BackendOllama, Routing: agent.RouteClient, Conversations: true, Enabled: true})
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

// refreshModels lists the installed Ollama models in the model picker,
// asking Ollama off fyne's goroutine.
func (v *agentsView) refreshModels() {
	v.status.SetText("Asking Ollama for its models…")
	v.app.background(func(ctx context.Context) func() {
		names, err := v.core.InstalledModels(ctx)
		return func() {
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			v.model.SetOptions(names)
			v.status.SetText(modelsFound(len(names)))
		}
	})
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
			v.pullButton.Show()
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
