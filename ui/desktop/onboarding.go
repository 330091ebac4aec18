package desktop

import (
	"fmt"
	"net/url"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
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
		o.Server = "No model server answered. Get Ollama (free, runs models here), start LM Studio's server, or add one you have."
	}
	o.Agent, o.HasAgent = agentToSetUp(s)
	switch {
	case !o.HasAgent:
		o.Model = "Create an agent: give it a name and pick a model for it."
	case o.Agent.Model == "":
		o.Model = "Pick a model for " + agentLabel(o.Agent) + ": in its editor, choose one the server lists, then Save."
	default:
		o.Model, o.ModelDone = agentLabel(o.Agent)+" runs on "+o.Agent.Model+".", true
	}
	name := "your agent"
	if o.HasAgent {
		name = agentLabel(o.Agent)
	}
	o.Try = "Try it: send " + name + " a message below its editor and watch it answer. Then connect a client (Connect tab)."
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

// agentToSetUp is the agent onboarding is about: an enabled agent with
// no model (the assistant first), else the assistant, else the first.
func agentToSetUp(s status) (agent.Agent, bool) {
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
	// the current step's buttons
	serverButtons, modelButtons, tryButtons *fyne.Container
	getOllama, providers, recheck           *widget.Button
	pick, tryIt, hide                       *widget.Button
	steps                                   onboardingSteps
	// needed: the panel showed because no agent could run; it then stays
	// for "Try it" until tried or hidden.
	needed, tried, dismissed bool
	onScreen                 *onboardingShown // nil until first shown
	// openURL opens a web page (fyne's OpenURL; tests record it).
	openURL func(*url.URL) error
}

func newOnboardingPanel(app *App) *onboardingPanel {
	p := &onboardingPanel{app: app, openURL: app.fy.OpenURL}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.title.Truncation = fyne.TextTruncateEllipsis
	p.text = widget.NewLabel("")
	p.text.Wrapping = fyne.TextWrapWord
	p.getOllama = widget.NewButton("Get Ollama…", func() {
		if u, err := url.Parse(ollamaDownload); err == nil {
			if err := p.openURL(u); err != nil {
				app.log.Warn("open the Ollama download page", "err", err)
			}
		}
	})
	p.getOllama.Importance = widget.HighImportance
	p.providers = widget.NewButton("Add a server…", app.showModelsSettings)
	p.recheck = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), func() { app.status.askServers() })
	p.pick = widget.NewButton("Pick a model…", p.pickModel)
	p.pick.Importance = widget.HighImportance
	p.tryIt = widget.NewButton("Try it", p.tryAgent)
	p.tryIt.Importance = widget.HighImportance
	p.hide = widget.NewButton("Hide", func() {
		p.dismissed = true
		p.box.Hide()
	})
	p.hide.Importance = widget.LowImportance
	p.serverButtons = container.NewHBox(p.recheck, p.providers, p.getOllama) // ↻ asks the servers again
	p.modelButtons = container.NewHBox(p.pick)
	p.tryButtons = container.NewHBox(p.tryIt)
	p.box = container.NewVBox(
		container.NewBorder(nil, nil, nil, p.hide, p.title),
		container.NewBorder(nil, nil, nil, container.NewStack(p.serverButtons, p.modelButtons, p.tryButtons), p.text),
		widget.NewSeparator())
	p.box.Hide() // until show
	return p
}

// visible reports whether the panel shows for this status: while no
// agent can run (before the servers answered, only when main said first
// start found no model), then until "Try it" or Hide.
func (p *onboardingPanel) visible(s status) bool {
	switch {
	case p.dismissed:
		return false
	case !s.Asked:
		return p.app.opts.Notice != "" || p.needed
	case !s.canRun():
		return true
	}
	return p.needed && !p.tried
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
	if v.visible {
		p.needed = true
	}
	if p.onScreen != nil && *p.onScreen == v {
		return
	}
	p.onScreen = &v
	p.title.SetText(v.title)
	for i, c := range []*fyne.Container{p.serverButtons, p.modelButtons, p.tryButtons} {
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

// pickModel opens the editor of the agent to set up on the Agents tab (a
// new agent's when there is none).
func (p *onboardingPanel) pickModel() {
	a := p.app
	a.tabs.SelectIndex(tabAgents)
	if p.steps.HasAgent {
		a.agents.edit(p.steps.Agent)
	} else {
		a.agents.edit(newAgentDefaults())
	}
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
		p.tried = true
		p.box.Hide()
	}
}

// NoModelNotice is what the window's first-run panel says when first
// start found no model server on this computer, until the servers are
// asked again; the panel then says what to do, step by step.
const NoModelNotice = "When Deskhand started, no model server answered on this computer (Ollama, LM Studio, llama.cpp, vLLM), so the agent 'assistant' has no model yet. Looking again…"
