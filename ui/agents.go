package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// agentsView lists the agents, each with its kill switch, and edits one.
type agentsView struct {
	app    *App
	list   *widget.List
	agents []agent.Agent

	editing                                        agent.Agent // the agent in the editor; ID "" for a new one
	name, slug, description, prompt, model, schema *widget.Entry
	backend, routing                               *widget.Select
	conversations, enabled                         *widget.Check
	schemaHint, status                             *widget.Label
	save                                           *widget.Button
}

var (
	backendChoices = []string{string(agent.BackendOllama), string(agent.BackendClient)}
	routingChoices = []string{string(agent.RouteClient), string(agent.RouteDesktop), string(agent.RouteDecline)}
)

func newAgentsView(app *App) *agentsView {
	v := &agentsView{app: app}
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

	v.name, v.slug, v.description, v.model = widget.NewEntry(), widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	v.prompt, v.schema = widget.NewMultiLineEntry(), widget.NewMultiLineEntry()
	v.prompt.SetMinRowsVisible(4)
	v.schema.SetMinRowsVisible(3)
	v.schema.SetPlaceHolder(`optional JSON Schema of the answer, e.g. {"type":"object","properties":{…}}`)
	v.schemaHint, v.status = widget.NewLabel(""), widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.schema.OnChanged = func(s string) { v.schemaHint.SetText(schemaProblem(s)) }
	v.backend = widget.NewSelect(backendChoices, nil)
	v.routing = widget.NewSelect(routingChoices, nil)
	v.conversations, v.enabled = widget.NewCheck("keeps conversations", nil), widget.NewCheck("enabled (served as a tool)", nil)
	v.save = widget.NewButton("Save", v.saveEditor)
	v.edit(agent.Agent{Backend: agent.BackendOllama, Routing: agent.RouteClient, Conversations: true, Enabled: true})
	return v
}

func (v *agentsView) content() fyne.CanvasObject {
	form := widget.NewForm(
		widget.NewFormItem("Name", v.name),
		widget.NewFormItem("Slug (tool name)", v.slug),
		widget.NewFormItem("Description", v.description),
		widget.NewFormItem("Prompt", v.prompt),
		widget.NewFormItem("Model backend", v.backend),
		widget.NewFormItem("Ollama model", v.model),
		widget.NewFormItem("Questions go to", v.routing),
		widget.NewFormItem("Response schema", container.NewVBox(v.schema, v.schemaHint)),
		widget.NewFormItem("", container.NewVBox(v.conversations, v.enabled)),
	)
	newAgent := widget.NewButton("New agent", func() {
		v.list.UnselectAll()
		v.edit(agent.Agent{Backend: agent.BackendOllama, Routing: agent.RouteClient, Conversations: true, Enabled: true})
	})
	editor := container.NewBorder(nil, container.NewVBox(v.save, v.status), nil, nil, container.NewVScroll(form))
	split := container.NewHSplit(container.NewBorder(nil, newAgent, nil, nil, v.list), editor)
	split.Offset = 0.3
	return split
}

// refresh re-reads the agents.
func (v *agentsView) refresh() {
	v.agents = v.app.core.Agents()
	v.list.Refresh()
}

// edit shows an agent in the editor.
func (v *agentsView) edit(a agent.Agent) {
	v.editing = a
	f := fieldsOf(a)
	v.name.SetText(f.Name)
	v.slug.SetText(f.Slug)
	v.description.SetText(f.Description)
	v.prompt.SetText(f.Prompt)
	v.model.SetText(f.Model)
	v.schema.SetText(f.Schema)
	v.backend.SetSelected(string(f.Backend))
	v.routing.SetSelected(string(f.Routing))
	v.conversations.SetChecked(f.Conversations)
	v.enabled.SetChecked(f.Enabled)
	v.status.SetText("")
}

// saveEditor saves what the editor holds; the core validates and the
// server picks the change up at once.
func (v *agentsView) saveEditor() {
	f := editorFields{
		Name: v.name.Text, Slug: v.slug.Text, Description: v.description.Text, Prompt: v.prompt.Text,
		Model: v.model.Text, Schema: v.schema.Text,
		Backend: agent.Backend(v.backend.Selected), Routing: agent.Routing(v.routing.Selected),
		Conversations: v.conversations.Checked, Enabled: v.enabled.Checked,
	}
	a, err := f.apply(v.editing)
	if err == nil {
		a, err = v.app.core.SaveAgent(context.Background(), a)
	}
	if err != nil {
		v.status.SetText("Not saved: " + agent.UserMessage(err))
		return
	}
	v.editing = a
	v.status.SetText("Saved " + agentLabel(a) + ".")
	v.refresh()
}

// setEnabled is the kill switch: a disabled agent leaves the tool list.
func (v *agentsView) setEnabled(slug string, on bool) {
	if err := v.app.core.SetAgentEnabled(context.Background(), slug, on); err != nil {
		v.status.SetText(agent.UserMessage(err))
	}
}
