package desktop

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// status is what the window around the tabs shows of the core: computed
// from it in plain values, so that its texts are tested without fyne.
type status struct {
	Paused bool
	// Served counts the agents served as tools that can answer: none
	// while paused, and not those without a model.
	Served int
	// NoModel are the enabled agents that run on a provider but name no
	// model: they fail when called.
	NoModel []agent.Agent
	// Agents are all the agents, for onboarding's "pick a model".
	Agents  []agent.Agent
	Waiting int // questions waiting for an answer
	// ClientsToday counts the clients whose token was used today.
	ClientsToday int
	// Servers are the model servers as last asked; Asked is false until
	// the first answer came back.
	Servers []serverState
	Asked   bool
}

// serverState is a provider's answer to "which models do you have?".
type serverState struct {
	Name     string
	Kind     agent.ProviderKind
	Answered bool
	Models   int
}

// statusOf computes the status from the core's in-memory state.
func statusOf(agents []agent.Agent, pending []agent.Question, paused bool, clients []agent.Client, now time.Time) status {
	s := status{Paused: paused, Agents: agents, Waiting: len(pending)}
	for _, a := range agents {
		if !a.Enabled {
			continue
		}
		if a.Backend != agent.BackendClient && a.Model == "" {
			s.NoModel = append(s.NoModel, a) // called, it fails
			continue
		}
		if !paused {
			s.Served++
		}
	}
	y, m, d := now.Date()
	for _, c := range clients {
		if !c.Active() || c.LastUsedAt.IsZero() {
			continue
		}
		if cy, cm, cd := c.LastUsedAt.In(now.Location()).Date(); cy == y && cm == m && cd == d {
			s.ClientsToday++
		}
	}
	return s
}

// stateText is the status bar's first word.
func (s status) stateText() string {
	if s.Paused {
		return "Paused"
	}
	return "Serving"
}

// agentsText says how many agents are served, and which have no model.
func (s status) agentsText() string {
	text := countOf(s.Served, "agent") + " served"
	if s.Paused {
		text = "No agent served"
	}
	switch n := len(s.NoModel); {
	case n == 1:
		text += " · " + s.NoModel[0].Slug + " has no model"
	case n > 1:
		text += fmt.Sprintf(" · %d agents have no model", n)
	}
	return text
}

// serversText says which model servers answered and with how many models.
func (s status) serversText() string {
	if !s.Asked {
		return "Asking the model servers…"
	}
	if len(s.Servers) == 0 {
		return "No model server set up"
	}
	var answered, silent []string
	for _, sv := range s.Servers {
		if sv.Answered {
			answered = append(answered, serverLabel(sv)+": "+countOf(sv.Models, "model"))
		} else {
			silent = append(silent, serverLabel(sv))
		}
	}
	if len(answered) == 0 {
		return "No model server answered"
	}
	text := strings.Join(answered, " · ")
	if len(silent) > 0 {
		text += " · " + strings.Join(silent, ", ") + " did not answer"
	}
	return text
}

// clientsText says how many clients connected today.
func (s status) clientsText() string {
	if s.ClientsToday == 0 {
		return "No client today"
	}
	return countOf(s.ClientsToday, "client") + " today"
}

// serverWithModels is the first model server that answered with at least
// one model; ok is false when none did.
func (s status) serverWithModels() (serverState, bool) {
	for _, sv := range s.Servers {
		if sv.Answered && sv.Models > 0 {
			return sv, true
		}
	}
	return serverState{}, false
}

// canRun reports whether some enabled agent can run. Until one can,
// onboarding shows.
func (s status) canRun() bool {
	return slices.ContainsFunc(s.Agents, s.runs)
}

// runs reports whether an agent can run: enabled, on a model of a server
// that answered with models, or on the calling client's model.
func (s status) runs(a agent.Agent) bool {
	if a.Enabled && a.Backend == agent.BackendClient {
		return true
	}
	if !a.Enabled || a.Model == "" {
		return false
	}
	provider := cmp.Or(a.Provider, agent.OllamaProvider)
	return slices.ContainsFunc(s.Servers, func(sv serverState) bool {
		return sv.Name == provider && sv.Answered && sv.Models > 0
	})
}

// serverLabel names a model server for people: the well-known ones by
// their product's name.
func serverLabel(sv serverState) string {
	switch sv.Name {
	case "ollama":
		return "Ollama"
	case "lmstudio", "lm-studio":
		return "LM Studio"
	case "openai":
		return "OpenAI"
	case "anthropic":
		return "Anthropic"
	}
	return sv.Name
}

// pausedBanner is what the window says above the tabs while paused.
const pausedBanner = "Paused: clients see no agents and calls are refused until you resume."

// questionsTabTitle is the Questions tab's title: with a count while
// questions wait.
func questionsTabTitle(waiting int) string {
	if waiting == 0 {
		return "Questions"
	}
	return fmt.Sprintf("Questions (%d)", waiting)
}

// trayStatusLine is the tray menu's first line.
func trayStatusLine(paused bool, serverURL string) string {
	if paused {
		return "Paused: no agent is served"
	}
	if serverURL == "" {
		return "Not serving"
	}
	return "Serving at " + hostOf(serverURL)
}

// hostOf is host:port of a URL, or the URL when it has none.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// askServers asks every provider for its models, at once, each for at
// most a few seconds: a server that does not answer in time did not
// answer.
func askServers(ctx context.Context, core Core) []serverState {
	listed := askServerModels(ctx, core)
	out := make([]serverState, len(listed))
	for i, l := range listed {
		out[i] = l.serverState
	}
	return out
}

// serverModels is a server's state and the models it listed.
type serverModels struct {
	serverState
	models []string
}

// askServerModels is askServers with the models each listed.
func askServerModels(ctx context.Context, core Core) []serverModels {
	providers := core.Providers.List()
	out := make([]serverModels, len(providers))
	var wg sync.WaitGroup
	for i, p := range providers {
		out[i].serverState = serverState{Name: p.Name, Kind: p.Kind}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if names, err := core.Providers.Models(ctx, p.Name); err == nil {
				out[i].Answered, out[i].Models, out[i].models = true, len(names), names
			}
		})
	}
	wg.Wait()
	return out
}

// statusBar is the line at the bottom of the window, the paused banner
// above the tabs, and the onboarding panel: all of them follow one status.
type statusBar struct {
	app  *App
	core Core
	now  func() time.Time

	shown status
	// asked counts the asks of the servers, so that a late answer does
	// not overwrite a newer one.
	asked int

	state, address, agents, clients *widget.Label
	// servers says what the model servers answered; a click asks again.
	servers         *widget.Button
	copyAddr, pause *widget.Button
	bar             *fyne.Container
	// onScreen is what the widgets show (nil until first shown); copied:
	// the copy button shows its tick.
	onScreen *statusShown
	copied   bool
	// title spaces the Questions tab's title's changes (questionsTitle).
	title spaced

	banner *fyne.Container
	resume *widget.Button
}

func newStatusBar(app *App, core Core) *statusBar {
	b := &statusBar{app: app, core: core, now: time.Now, title: spaced{every: questionsEvery}}
	b.state = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	b.address = widget.NewLabel(cmp.Or(hostOf(app.opts.ServerURL), "(not serving)"))
	b.agents, b.clients = widget.NewLabel(""), widget.NewLabel("")
	b.agents.Truncation = fyne.TextTruncateEllipsis // what gives way in a narrow window
	b.copyAddr = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), b.copyAddress)
	if app.opts.ServerURL == "" {
		b.copyAddr.Hide()
	}
	b.servers = widget.NewButton("", b.askServers)
	b.servers.Importance = widget.LowImportance
	b.pause = widget.NewButton("Pause", app.togglePause)
	b.bar = container.NewBorder(widget.NewSeparator(), nil,
		container.NewHBox(b.state, b.address, b.copyAddr),
		container.NewHBox(b.clients, b.pause),
		container.NewBorder(nil, nil, b.servers, nil, b.agents))

	text := widget.NewLabelWithStyle(pausedBanner, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	text.Importance = widget.WarningImportance
	text.Wrapping = fyne.TextWrapWord
	b.resume = widget.NewButton("Resume", func() { app.setPaused(false) })
	b.resume.Importance = widget.HighImportance
	b.banner = container.NewBorder(nil, widget.NewSeparator(), nil, b.resume, text)
	b.banner.Hide()
	b.show()
	return b
}

// copyAddress puts the address clients connect to on the clipboard.
func (b *statusBar) copyAddress() {
	b.app.fy.Clipboard().SetContent(b.app.opts.ServerURL)
	b.copyAddr.SetIcon(theme.ConfirmIcon())
	b.copied = true
}

// refresh re-reads the in-memory state: the servers' answers stay as last
// asked.
func (b *statusBar) refresh() {
	s := statusOf(b.core.Agents.List(), b.core.Questions.Pending(), b.core.Settings.Paused(), b.core.Clients.List(), b.now())
	s.Servers, s.Asked = b.shown.Servers, b.shown.Asked
	b.shown = s
	b.show()
}

// askServers asks the model servers for their models off fyne's
// goroutine; the newest ask wins.
func (b *statusBar) askServers() {
	b.asked++
	n := b.asked
	if !b.shown.Asked {
		b.servers.SetText("Asking the model servers…")
		b.app.relayout()
	}
	b.app.background(func(ctx context.Context) func() {
		servers := askServers(ctx, b.core)
		return func() {
			if n != b.asked {
				return
			}
			b.shown.Servers, b.shown.Asked = servers, true
			b.show()
		}
	})
}

// questionsEvery is the least time between two changes of what shows the
// questions waiting while they come and go: the Questions tab's title (a
// title changed repaints the whole window) and the tray (a D-Bus message
// each).
const questionsEvery = 5 * time.Second

// questionsTitle is the Questions tab's title for waiting questions: it
// changes at most every questionsEvery, the last count shown once that has
// passed. Under load questions a client answers at once come and go with
// every turn; each still shows in its popup at once.
func (b *statusBar) questionsTitle(waiting int) string {
	title := questionsTabTitle(waiting)
	if b.onScreen == nil || title == b.onScreen.questionsTab || b.title.ready(b.now(), b.app.afterOnUI, b.refresh) {
		return title
	}
	return b.onScreen.questionsTab
}

// spaced lets what is shown change at most every so often: a change
// within that time is put off, and the showing set for when it may.
type spaced struct {
	every time.Duration
	last  time.Time // when what is shown last changed
	due   bool      // a later showing is set
}

// ready reports whether a change may show at now; when it may not, it
// sets show to run, through later, once it may (one at a time).
func (s *spaced) ready(now time.Time, later func(time.Duration, func()), show func()) bool {
	wait := s.every - now.Sub(s.last)
	if wait <= 0 {
		return true
	}
	if !s.due {
		s.due = true
		later(wait, func() {
			s.due = false
			show()
		})
	}
	return false
}

// statusShown is what the status bar shows, so that show changes the
// widgets only when it differs: the status is shown again after every
// turn, and each change lays out and draws the whole window again.
type statusShown struct {
	state, servers, agents, clients, questionsTab string
	paused                                        bool
}

// show puts the status on the widgets.
func (b *statusBar) show() {
	s := b.shown
	if b.app.onboarding != nil {
		b.app.onboarding.show(s)
	}
	if b.copied { // back to the copy icon at the next showing
		b.copied = false
		b.copyAddr.SetIcon(theme.ContentCopyIcon())
	}
	v := statusShown{state: s.stateText(), servers: s.serversText(), agents: s.agentsText(), clients: s.clientsText(),
		questionsTab: b.questionsTitle(s.Waiting), paused: s.Paused}
	old := b.onScreen
	if old != nil && *old == v {
		return
	}
	if old != nil && v.questionsTab != old.questionsTab {
		b.title.last = b.now()
	}
	b.onScreen = &v
	// Only what differs is redrawn: a label set again is shaped again.
	stateImportance := widget.SuccessImportance
	if v.paused {
		stateImportance = widget.WarningImportance
	}
	setLabel(b.state, v.state, stateImportance)
	if old == nil || v.paused != old.paused {
		if v.paused {
			b.pause.SetText("Resume")
			b.banner.Show()
		} else {
			b.pause.SetText("Pause")
			b.banner.Hide()
		}
	}
	if b.servers.Text != v.servers {
		b.servers.SetText(v.servers)
	}
	setLabel(b.agents, v.agents, b.agents.Importance)
	setLabel(b.clients, v.clients, b.clients.Importance)
	if b.app.tabs != nil && len(b.app.tabs.Items) > tabQuestions && b.app.tabs.Items[tabQuestions].Text != v.questionsTab {
		b.app.tabs.Items[tabQuestions].Text = v.questionsTab
		b.app.tabs.Refresh()
	}
	b.app.relayout()
}
