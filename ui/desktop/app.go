package desktop

import (
	"cmp"
	"context"
	"io"
	"log/slog"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// Options configures the desktop.
type Options struct {
	// Tray puts Deskhand in the system tray; main sets it only when a
	// D-Bus session bus is there (fyne's tray crashes on quit without one).
	Tray bool
	// ServerURL is where the agents are served, shown in the window.
	ServerURL string
	// DataDir is the data folder, shown in Settings.
	DataDir string
	// Connector connects MCP clients (the Connect tab); nil leaves the tab
	// saying so.
	Connector Connector
	// Icons of the app and the tray: serving, paused, question waiting.
	Icon, PausedIcon, QuestionIcon fyne.Resource
	Logger                         *slog.Logger
}

// trayCore is what the tray and the window around the tabs need of the
// core: the agents (each a kill switch in the tray), how many questions
// wait, and the pause switch. All of it is in memory.
type trayCore interface {
	Agents() []agent.Agent
	Pending() []agent.Question
	Paused() bool
	SetPaused(paused bool)
}

// eventSource tells the desktop what changed in the core.
type eventSource interface {
	Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
}

// App is the desktop.
type App struct {
	fy     fyne.App
	tray   trayCore
	events eventSource
	opts   Options
	log    *slog.Logger

	// do runs a function on fyne's goroutine (fyne.Do; tests queue it).
	do func(func())

	win           fyne.Window
	tabs          *container.AppTabs
	agents        *agentsView
	questions     *questionsView
	conversations *conversationsView
	connect       *connectView
	settings      *settingsView
	trayMenu      *fyne.Menu
}

// New builds the window (hidden) and the tray.
func New(fy fyne.App, core Core, opts Options) *App {
	a := &App{fy: fy, tray: core, events: core, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))), do: fyne.Do}
	if opts.Icon != nil {
		fy.SetIcon(opts.Icon)
	}
	a.win = fy.NewWindow("Deskhand")
	a.agents = newAgentsView(a, core)
	a.questions = newQuestionsView(a, core)
	a.conversations = newConversationsView(a, core)
	a.connect = newConnectView(a, opts.Connector)
	a.settings = newSettingsView(a, core)
	status := widget.NewLabel("Serving your agents at " + cmp.Or(opts.ServerURL, "(not serving)"))
	a.tabs = container.NewAppTabs(
		container.NewTabItem("Agents", a.agents.content()),
		container.NewTabItem("Questions", a.questions.content()),
		container.NewTabItem("Conversations", a.conversations.content()),
		container.NewTabItem("Connect", a.connect.content()),
		container.NewTabItem("Settings", a.settings.content()),
	)
	a.tabs.OnSelected = func(t *container.TabItem) {
		if t.Text == "Connect" && a.connect.clients == nil {
			a.connect.refresh()
		}
	}
	a.win.SetContent(container.NewBorder(nil, status, nil, nil, a.tabs))
	a.win.Resize(fyne.NewSize(900, 600))
	if opts.Tray {
		a.win.SetCloseIntercept(a.win.Hide) // closing the window keeps the app in the tray
		a.setTray()
	}
	return a
}

// Follow keeps the desktop in step with the core until ctx ends: the only
// goroutine that reacts to core events, and it touches widgets only
// through fyne.Do.
func (a *App) Follow(ctx context.Context) {
	events := a.events.Subscribe(ctx)
	a.do(a.refresh)
	go func() {
		for e := range events {
			a.do(func() { a.handle(e) })
		}
	}()
}

// handle runs on fyne's goroutine.
func (a *App) handle(e agent.Event) {
	a.conversations.event(e)
	a.agents.tryEvent(e)
	switch e.Kind {
	case agent.EventAgentsChanged:
		a.agents.refresh()
		a.setTray()
	case agent.EventQuestionAsked:
		a.questions.refresh()
		a.questions.popup(e.Question)
		a.setTray()
		a.fy.SendNotification(fyne.NewNotification("Deskhand: a question", e.Text))
	case agent.EventClientsChanged:
		a.settings.refreshClients()
	case agent.EventQuestionClosed:
		if a.questions.closed(e.Question) {
			if note := closedNote(e); note != "" {
				a.fy.SendNotification(fyne.NewNotification("Deskhand", note))
			}
		}
		a.questions.refresh()
		a.setTray()
	}
}

func (a *App) refresh() {
	a.agents.refresh()
	a.conversations.refresh()
	a.settings.refresh()
	a.questions.refresh()
	a.setTray()
}

// agentSlug names an agent by its ID, for lists.
func (a *App) agentSlug(id string) string {
	for _, ag := range a.agents.agents {
		if ag.ID == id {
			return ag.Slug
		}
	}
	return "(unknown agent)"
}

// Tab indexes: agents, questions, conversations, connect, settings.
const (
	tabConnect  = 3
	tabSettings = 4
)

// showTab brings the window forward on a tab.
func (a *App) showTab(i int) {
	a.tabs.SelectIndex(i)
	a.Show()
}

// Show brings the window forward.
func (a *App) Show() {
	a.win.Show()
	a.win.RequestFocus()
}

// setTray rebuilds the tray menu: open, each agent's kill switch, the
// questions waiting, quit (fyne adds Quit itself).
func (a *App) setTray() {
	desk, ok := a.fy.(desktop.App)
	if !ok || !a.opts.Tray {
		return
	}
	items := []*fyne.MenuItem{fyne.NewMenuItem("Open Deskhand", a.Show), fyne.NewMenuItemSeparator()}
	for _, ag := range a.tray.Agents() {
		item := fyne.NewMenuItem(agentLabel(ag), nil)
		item.Checked = ag.Enabled
		item.Action = func() { a.agents.setEnabled(ag.Slug, !ag.Enabled) }
		items = append(items, item)
	}
	waiting := len(a.tray.Pending())
	pending := fyne.NewMenuItem(pendingLabel(waiting), func() {
		a.Show()
		a.questions.openAll()
	})
	paused := a.tray.Paused()
	pause := fyne.NewMenuItem(pauseLabel(paused), func() {
		a.tray.SetPaused(!paused)
	})
	connect := fyne.NewMenuItem("Connect a client…", func() {
		a.showTab(tabConnect)
		a.connect.refresh()
	})
	settings := fyne.NewMenuItem("Settings…", func() { a.showTab(tabSettings) })
	items = append(items, fyne.NewMenuItemSeparator(), pending, connect, settings, pause)
	a.trayMenu = fyne.NewMenu("Deskhand", items...)
	desk.SetSystemTrayMenu(a.trayMenu)
	if icon := trayIcon(a.opts, paused, waiting); icon != nil {
		desk.SetSystemTrayIcon(icon)
	}
}

// trayIcon shows the state at a glance: a question waiting wins over
// paused, which wins over serving.
func trayIcon(o Options, paused bool, waiting int) fyne.Resource {
	switch {
	case waiting > 0 && o.QuestionIcon != nil:
		return o.QuestionIcon
	case paused && o.PausedIcon != nil:
		return o.PausedIcon
	}
	return o.Icon
}
