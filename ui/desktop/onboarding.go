package desktop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// ollamaDownload is where the first-run panel sends people to get Ollama.
const ollamaDownload = "https://ollama.com/download"

// onboardingSteps is what the first-run panel says: the model server,
// a model for an agent, then trying it.
type onboardingSteps struct {
	Server, Model, Try    string
	ServerDone, ModelDone bool
	// Agent is the agent to pick a model for; none (ok false) when there
	// is no agent at all.
	Agent    agent.Agent
	HasAgent bool
}

// onboardingOf says where a new person stands on the way to a working
// agent.
func onboardingOf(s status) onboardingSteps {
	var o onboardingSteps
	switch sv, ok := s.serverWithModels(); {
	case ok:
		o.Server, o.ServerDone = serverLabel(sv)+" answered, with "+countOf(sv.Models, "model")+".", true
	case !s.Asked:
		o.Server = "Looking for a model server on this computer…"
	case answeredEmpty(s) != "":
		name := answeredEmpty(s)
		o.Server = name + " answered but has no model yet: download one (Ollama: type a name such as qwen3 in the agent's model and press Pull; LM Studio: load one in the app)."
	default:
		o.Server = "No model server answered. Start yours, or get Ollama (free), or type the address of yours:"
	}
	o.Agent, o.HasAgent = agentToSetUp(s)
	switch {
	case !o.HasAgent:
		o.Model = "Create an agent: give it a name and pick a model for it."
	case o.Agent.Model == "":
		o.Model = "Pick a model for " + agentLabel(o.Agent) + " among those your model servers have."
	default:
		o.Model, o.ModelDone = agentLabel(o.Agent)+" runs on "+o.Agent.Model+".", true
	}
	name := "your agent"
	if o.HasAgent {
		name = agentLabel(o.Agent)
	}
	o.Try = "Try it: send " + name + " a message and watch it answer. Then connect the AI clients you use."
	return o
}

// answeredEmpty names a server that answered with no model, or "".
func answeredEmpty(s status) string {
	for _, sv := range s.Servers {
		if sv.Answered && sv.Models == 0 {
			return serverLabel(sv)
		}
	}
	return ""
}

// agentToSetUp is the agent onboarding is about: one that can run (the
// assistant first), else an enabled agent with no model (the assistant
// first), else the assistant, else the first.
func agentToSetUp(s status) (agent.Agent, bool) {
	for _, a := range s.Agents {
		if a.Slug == agent.DefaultAgentSlug && s.runs(a) {
			return a, true
		}
	}
	for _, a := range s.Agents {
		if s.runs(a) {
			return a, true
		}
	}
	for _, a := range s.NoModel {
		if a.Slug == agent.DefaultAgentSlug {
			return a, true
		}
	}
	if len(s.NoModel) > 0 {
		return s.NoModel[0], true
	}
	for _, a := range s.Agents {
		if a.Slug == agent.DefaultAgentSlug {
			return a, true
		}
	}
	if len(s.Agents) > 0 {
		return s.Agents[0], true
	}
	return agent.Agent{}, false
}

// current is the step to do next: 1 the server, 2 the model, 3 try it.
func (o onboardingSteps) current() int {
	switch {
	case !o.ServerDone:
		return 1
	case !o.ModelDone:
		return 2
	}
	return 3
}

// onboardingTitle heads the first-run panel: where the person is, and
// what is done.
func onboardingTitle(o onboardingSteps) string {
	title := fmt.Sprintf("Get your first agent working, step %d of 3", o.current())
	switch o.current() {
	case 2:
		title += ": ✔ " + o.Server
	case 3:
		title += ": ✔ " + o.Model
	}
	return title
}

// onboardingPanel walks a new person from nothing to a working agent,
// above the tabs, one step at a time: while no agent can run, then once
// to say "Try it". It can be hidden for the session.
type onboardingPanel struct {
	app   *App
	box   *fyne.Container
	title *widget.Label
	text  *widget.Label // the current step
	// the current step's buttons (step 1's are in addressRow)
	modelButtons, tryButtons      *fyne.Container
	getOllama, providers, recheck *widget.Button
	pick, tryIt, connect, hide    *widget.Button
	// The address of a model server not found by itself, and what asking
	// it said (step 1).
	address     *widget.Entry
	use         *widget.Button
	addressRow  *fyne.Container
	addressNote *widget.Label
	steps       onboardingSteps
	onScreen    *onboardingShown // nil until first shown
	// openURL opens a web page (fyne's OpenURL; tests record it).
	openURL func(*url.URL) error
}

func newOnboardingPanel(app *App) *onboardingPanel {
	p := &onboardingPanel{app: app, openURL: app.fy.OpenURL}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.title.Truncation = fyne.TextTruncateEllipsis
	p.text = widget.NewLabel("")
	p.text.Wrapping = fyne.TextWrapWord
	p.getOllama = widget.NewButton("Get Ollama…", p.openOllamaDownload)
	p.providers = widget.NewButton("Add a server…", app.showModelsSettings)
	p.address = widget.NewEntry()
	p.address.SetPlaceHolder("its address, e.g. 127.0.0.1:1234")
	p.address.OnSubmitted = func(string) { p.useAddress() }
	p.use = widget.NewButton("Use this server", p.useAddress)
	p.use.Importance = widget.HighImportance
	p.addressNote = widget.NewLabel("")
	p.addressNote.Wrapping = fyne.TextWrapWord
	p.addressNote.Hide()
	p.recheck = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() { app.status.askServers() })
	p.pick = widget.NewButton("Pick a model…", p.pickModel)
	p.pick.Importance = widget.HighImportance
	p.tryIt = widget.NewButton("Try it", p.tryAgent)
	p.tryIt.Importance = widget.HighImportance
	p.connect = widget.NewButton("Connect a client…", func() {
		p.done()
		app.tabs.SelectIndex(tabConnect)
	})
	p.hide = widget.NewButton("Hide", p.done)
	p.hide.Importance = widget.LowImportance
	// Step 1's buttons go with the address, under its text; the other
	// steps' beside theirs.
	serverButtons := container.NewHBox(p.use, p.recheck, p.providers, p.getOllama) // ↻ asks the servers again
	p.addressRow = container.NewVBox(container.NewBorder(nil, nil, nil, serverButtons, p.address), p.addressNote)
	p.modelButtons = container.NewHBox(p.pick)
	p.tryButtons = container.NewHBox(p.tryIt, p.connect)
	p.box = container.NewVBox(
		container.NewBorder(nil, nil, nil, p.hide, p.title),
		container.NewBorder(nil, nil, nil, container.NewStack(p.modelButtons, p.tryButtons), p.text),
		p.addressRow)
	p.box.Hide() // until show
	return p
}

// onboardedKey remembers, in fyne's preferences, that the person tried
// an agent from the panel, went on to Connect, or hid it: the panel then
// never shows again. Until then it shows at every start, on the step the
// person stands at.
const onboardedKey = "onboarding.done"

// visible reports whether the panel shows: until it is done, once the
// servers answered or when main said first start found no model.
func (p *onboardingPanel) visible(s status) bool {
	switch {
	case p.app.fy.Preferences().Bool(onboardedKey):
		return false
	case !s.Asked:
		return p.app.opts.Notice != ""
	}
	return true
}

// done hides the panel for good.
func (p *onboardingPanel) done() {
	p.app.fy.Preferences().SetBool(onboardedKey, true)
	p.box.Hide()
}

// onboardingShown is what the panel shows, so that show changes the
// widgets only when it differs (the status is shown again after every
// turn).
type onboardingShown struct {
	title, text, pick string
	step              int
	visible           bool
}

// show puts the current step of a status on the panel.
func (p *onboardingPanel) show(s status) {
	p.steps = onboardingOf(s)
	v := onboardingShown{title: onboardingTitle(p.steps), step: p.steps.current(), visible: p.visible(s), pick: "New agent…"}
	switch v.step {
	case 1:
		// Before the servers answer, main's word on first start.
		v.text = p.steps.Server
		if !s.Asked && p.app.opts.Notice != "" {
			v.text = p.app.opts.Notice
		}
	case 2:
		v.text = p.steps.Model
	default:
		v.text = p.steps.Try
	}
	if p.steps.HasAgent {
		v.pick = "Pick a model…"
	}
	if p.onScreen != nil && *p.onScreen == v {
		return
	}
	p.onScreen = &v
	p.title.SetText(v.title)

	for i, c := range []*fyne.Container{p.addressRow, p.modelButtons, p.tryButtons} {
		if i+1 == v.step {
			c.Show()
		} else {
			c.Hide()
		}
	}
	p.text.SetText(v.text)
	p.pick.SetText(v.pick)
	if v.visible {
		p.box.Show()
	} else {
		p.box.Hide()
	}
}

// useAddress sets up the model server at the address typed, whatever
// kind it is, then asks the servers again: the panel moves on.
func (p *onboardingPanel) useAddress() {
	address := strings.TrimSpace(p.address.Text)
	if address == "" {
		p.note("Type your model server's address first.", false)
		return
	}
	p.note("Asking "+address+"…", false)
	p.use.Disable()
	a := p.app
	a.background(func(ctx context.Context) func() {
		saved, models, err := a.core.Providers.Find(ctx, address)
		return func() {
			p.use.Enable()
			if err != nil {
				p.note("✖ "+agent.UserMessage(err), true)
				return
			}
			p.note("✔ "+serverLabel(serverState{Name: saved.Name, Kind: saved.Kind})+" answered at "+saved.BaseURL+", with "+countOf(len(models), "model")+".", false)
			a.status.askServers()
		}
	})
}

// note says, under the address, what asking it did.
func (p *onboardingPanel) note(text string, failed bool) {
	p.addressNote.Importance = failedOr(failed, widget.MediumImportance)
	p.addressNote.SetText(text)
	p.addressNote.Show()
}

// openOllamaDownload opens Ollama's download page in the browser; where
// none opens, it shows the address to copy.
func (p *onboardingPanel) openOllamaDownload() {
	u, _ := url.Parse(ollamaDownload)
	if err := p.openURL(u); err != nil {
		p.app.log.Warn("open the Ollama download page", "err", err)
		link := widget.NewEntry()
		link.SetText(ollamaDownload)
		copyIt := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { p.app.fy.Clipboard().SetContent(ollamaDownload) })
		p.app.showDialog(dialog.NewCustom("Get Ollama", "Close", container.NewVBox(
			plainNote("No web browser opened here. Open this address in one to download Ollama:"),
			container.NewBorder(nil, nil, nil, copyIt, link)), p.app.win), nil)
	}
}

// pickModel offers the models of every server that answered, one click
// each, for the agent to set up: picked, it is saved on that model. With
// no agent, or no model to offer, the editor opens instead.
func (p *onboardingPanel) pickModel() {
	a := p.app
	if !p.steps.HasAgent {
		a.tabs.SelectIndex(tabAgents)
		a.agents.edit(newAgentDefaults())
		return
	}
	ag := p.steps.Agent
	a.background(func(ctx context.Context) func() {
		offers := modelOffers(ctx, a.core)
		return func() {
			if len(offers) == 0 {
				a.tabs.SelectIndex(tabAgents)
				a.agents.edit(ag)
				return
			}
			p.showPicker(ag, offers)
		}
	})
}

// modelOffer is a model a server has.
type modelOffer struct{ provider, model string }

// modelOffers are the models of every server that answers, each asked
// for at most a few seconds.
func modelOffers(ctx context.Context, core Core) []modelOffer {
	var out []modelOffer
	for _, sv := range askServerModels(ctx, core) {
		for _, m := range sv.models {
			out = append(out, modelOffer{provider: sv.Name, model: m})
		}
	}
	return out
}

// showPicker is the dialog of the models offered: a click saves the
// agent on one.
func (p *onboardingPanel) showPicker(ag agent.Agent, offers []modelOffer) {
	a := p.app
	var d dialog.Dialog
	buttons := container.NewVBox()
	for _, o := range offers {
		b := widget.NewButton(o.model+"  ·  "+serverLabel(serverState{Name: o.provider}), func() {
			d.Hide()
			p.saveModel(ag, o)
		})
		b.Alignment = widget.ButtonAlignLeading
		buttons.Add(b)
	}
	scroll := container.NewVScroll(buttons)
	scroll.SetMinSize(fyne.NewSize(360, min(buttons.MinSize().Height, 300)))
	editor := widget.NewButton("Open its editor instead", func() {
		d.Hide()
		a.tabs.SelectIndex(tabAgents)
		a.agents.edit(ag)
	})
	editor.Importance = widget.LowImportance
	d = dialog.NewCustom("Pick a model for "+agentLabel(ag), "Cancel", container.NewBorder(nil, editor, nil, nil, scroll), a.win)
	a.showDialog(d, nil)
}

// saveModel saves the agent on the model picked; the status follows the
// core's event.
func (p *onboardingPanel) saveModel(ag agent.Agent, o modelOffer) {
	a := p.app
	ag.Provider, ag.Model = o.provider, o.model
	a.background(func(ctx context.Context) func() {
		_, err := a.core.Agents.Save(ctx, ag)
		return func() {
			if err != nil {
				a.showDialog(dialog.NewError(errors.New(agent.UserMessage(err)), a.win), nil)
			}
		}
	})
}

// tryAgent opens the agent's editor with the keyboard in "Try it"; the
// panel's work is done.
func (p *onboardingPanel) tryAgent() {
	a := p.app
	a.tabs.SelectIndex(tabAgents)
	if p.steps.HasAgent {
		a.agents.edit(p.steps.Agent)
	}
	a.agents.showTry()
	if p.steps.current() == 3 {
		p.done()
	}
}

// NoModelNotice is what the window's first-run panel says when first
// start found no model server on this computer, until the servers are
// asked again; the panel then says what to do, step by step.
const NoModelNotice = "When Deskhand started, no model server answered on this computer (Ollama, LM Studio, llama.cpp, vLLM), so the agent 'assistant' has no model yet. Looking again…"
