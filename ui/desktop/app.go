package desktop

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"

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
	// Icon is the app's; the tray's are small (each change sends the
	// pixels whole): serving (Icon when nil), paused, question waiting.
	Icon, TrayIcon, PausedIcon, QuestionIcon fyne.Resource
	Logger                                   *slog.Logger
	// Notice, when set, says why first start found no model to run on:
	// the first-run panel above the tabs then shows at once, saying it
	// until the model servers answer (then it says what to do itself).
	Notice string
	// InEffect holds the values this run uses for settings that flags and
	// the environment can override (keys as in Settings: "server.addr",
	// "ollama.host", "server.insecure_no_auth"), so that Settings shows
	// what is in effect, not only what is stored.
	InEffect map[string]string
	// KeychainProblem says, when the OS keychain cannot be used, what is
	// wrong, where secrets go instead and what to do; "" when it works.
	KeychainProblem string
	// ImportToolServers registers the MCP servers the person's clients
	// know (nothing when dryRun) and says what it found and did; nil hides
	// Settings → Tool servers' Import.
	ImportToolServers func(ctx context.Context, dryRun bool) (ImportReport, error)
}

// App is the desktop.
type App struct {
	fy   fyne.App
	core Core
	opts Options
	log  *slog.Logger

	// The window around the tabs: the status bar with the paused banner,
	// the first-run panel, the main menu (the keyboard's shortcuts) and
	// the dialogs Escape closes.
	status     *statusBar
	onboarding *onboardingPanel
	frame      *fyne.Container // the tabs with the bars around them
	mainMenu   *fyne.MainMenu
	pauseItem  *fyne.MenuItem
	dialogs    []dialog.Dialog

	// do runs a function on fyne's goroutine (fyne.Do; tests queue it).
	do func(func())

	// ctx is the App's: every call to the core made from the UI gets it,
	// and Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex // guards closed and the start of work
	closed bool
	work   sync.WaitGroup // the goroutines the App started

	win           fyne.Window
	hidden        bool    // the window is closed to the tray
	watch         watched // whose streamed events reach fyne's goroutine (follow_load.go)
	tabs          *container.AppTabs
	settingsTabs  *container.AppTabs // General, Models, Approvals, Tool servers
	agents        *agentsView
	questions     *questionsView
	conversations *conversationsView
	connect       *connectView
	settings      *settingsView
	models        *modelsView
	trayMenu      *fyne.Menu
	// trayShown is what the tray last got: its menu's items as they read,
	// its icon, and whether it was paused; pace spaces its changes. The
	// tray is told again only what changed: each telling is a D-Bus
	// message, an icon's pixels encoded whole.
	trayShown struct {
		menu   string
		icon   fyne.Resource
		paused bool
		pace   spaced
	}
	approvals   *approvalsView
	toolServers *toolServersView
	activity    *activityView // the Log tab
	// typing tells whether the person types in the window, and
	// stopTyping (under mu) stops its sampling (typing.go).
	typing     typingWatch
	stopTyping context.CancelFunc
	// stateLater shows the core's state (showState) after turns start
	// (who was used today) and questions come and go unseen, at most once
	// per statusEvery (follow_load.go).
	stateLater throttle
}

// New builds the window (hidden) and the tray. The App stops its work at
// Close, which its caller calls once fyne's Run has returned: not from
// fyne's stop hook, which fyne 2.7.1 hands its main loop as the loop shuts
// down, and a hook handed on at the wrong moment is never run, the process
// hung at quit.
func New(fy fyne.App, core Core, opts Options) *App {
	a := newApp(fy, opts)
	a.core = core
	fy.Lifecycle().SetOnEnteredForeground(func() { a.watchTyping(true) })
	fy.Lifecycle().SetOnExitedForeground(func() { a.watchTyping(false) })
	a.agents = newAgentsView(a, core)
	a.agents.servers = newAgentServers(a, core)
	a.questions = newQuestionsView(a, core)
	a.conversations = newConversationsView(a, core)
	a.connect = newConnectView(a, opts.Connector)
	a.settings = newSettingsView(a, core)
	a.models = newModelsView(a, core)
	a.approvals = newApprovalsView(a, core)
	a.toolServers = newToolServersView(a, core)
	a.activity = newActivityView(a, core)
	a.models.changed = a.agents.providersChanged // at once; the core's event follows
	a.settingsTabs = container.NewAppTabs(
		container.NewTabItem("General", newPage(a.settings.content())),
		container.NewTabItem("Models", newPage(a.models.content())),
		container.NewTabItem("Approvals", newPage(a.approvals.content())),
		container.NewTabItem("Tool servers", newPage(a.toolServers.content())),
	)
	a.tabs = container.NewAppTabs(
		container.NewTabItem("Agents", newPage(a.agents.content())),
		container.NewTabItem("Questions", newPage(a.questions.content())),
		container.NewTabItem("Conversations", newPage(a.conversations.content())),
		container.NewTabItem("Connect", newPage(a.connect.content())),
		container.NewTabItem("Settings", newPage(a.settingsTabs)),
		container.NewTabItem("Log", newPage(a.activity.content())),
	)
	a.tabs.OnSelected = func(t *container.TabItem) {
		if t.Text == "Connect" && a.connect.clients == nil {
			a.connect.refresh()
		}
		if t.Text == "Settings" {
			a.settings.refreshCalls() // the calls today
		}
		a.tabsMayBeSeen()
	}
	a.startProbe()
	a.onboarding = newOnboardingPanel(a)
	a.status = newStatusBar(a, core)
	a.setKeys()
	a.frame = container.NewBorder(container.NewVBox(a.status.banner, a.onboarding.box), a.status.bar, nil, nil, a.tabs)
	a.win.SetContent(a.frame)
	a.win.Resize(fyne.NewSize(1000, 720)) // room for the editor; it fits 680×480 too
	if opts.Tray {
		a.win.SetCloseIntercept(a.closeToTray) // closing the window keeps the app in the tray
		a.setTray()
	}
	return a
}

// relayout lays the bars around the tabs out again after their texts
// changed: a text that wraps onto another line needs more height.
func (a *App) relayout() {
	if a.frame == nil {
		return // being built
	}
	a.frame.Layout.Layout(a.frame.Objects, a.frame.Size())
	for _, bar := range []*fyne.Container{a.status.bar, a.onboarding.box} {
		bar.Layout.Layout(bar.Objects, bar.Size())
	}
}

// showModelsSettings opens Settings → Models, where providers are added.
func (a *App) showModelsSettings() {
	a.tabs.SelectIndex(tabSettings)
	a.settingsTabs.SelectIndex(1) // Models
}

// closedToTrayKey remembers, in fyne's preferences, that closing the
// window to the tray was explained once.
const closedToTrayKey = "window.closed_to_tray_told"

// closeToTray hides the window, the app staying in the tray; the first
// time ever, a notification says so.
func (a *App) closeToTray() {
	a.win.Hide()
	a.hidden = true
	prefs := a.fy.Preferences()
	if prefs.Bool(closedToTrayKey) {
		return
	}
	prefs.SetBool(closedToTrayKey, true)
	a.fy.SendNotification(fyne.NewNotification("Deskhand is still running", closedToTrayNote(a.core.Settings.Paused())))
}

// closedToTrayNote tells, once, that closing the window left Deskhand
// running.
func closedToTrayNote(paused bool) string {
	state := "Your agents are still served."
	if paused {
		state = "Serving stays paused."
	}
	return state + " Open the window again, or quit, from Deskhand's icon in the tray."
}

// togglePause pauses serving, or resumes it (the window's button, Ctrl+P).
func (a *App) togglePause() { a.setPaused(!a.core.Settings.Paused()) }

// setPaused pauses or resumes serving, and shows it at once (the core's
// agents_changed event follows).
func (a *App) setPaused(paused bool) {
	a.core.Settings.SetPaused(paused)
	a.showState()
}

// quit ends Deskhand (the tray's and the menu's Quit, Ctrl+Q).
func (a *App) quit() { a.fy.Quit() }

// showState puts the core's in-memory state on the window around the
// tabs and the tray.
func (a *App) showState() {
	if a.status == nil {
		return // a screen tested alone (newShell)
	}
	a.status.refresh()
	a.showMenuState(a.core.Settings.Paused())
	a.setTray()
}

// newApp is the App without its screens: the window, the context and
// the means to run work off fyne's goroutine.
func newApp(fy fyne.App, opts Options) *App {
	// The root of every context the UI hands the core; Close cancels it.
	ctx, cancel := context.WithCancel(context.Background())
	a := &App{fy: fy, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		do: fyne.Do, ctx: ctx, cancel: cancel}
	a.stateLater = a.stateThrottle()
	a.trayShown.pace.every = questionsEvery
	if opts.Icon != nil {
		fy.SetIcon(opts.Icon)
	}
	fy.Settings().SetTheme(readableTheme{theme.DefaultTheme()})
	a.win = fy.NewWindow("Deskhand")
	return a
}

// Close stops the App's work: it cancels the context of every call to the
// core still running and waits for the goroutines the App started. Results
// that come in later are dropped. Close may be called more than once.
func (a *App) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.work.Wait()
}

// goStart runs f on a goroutine of the App's, which Close waits for; not
// at all once the App is closed.
func (a *App) goStart(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.work.Add(1)
	go func() {
		defer a.work.Done()
		f()
	}()
}

// background runs work off fyne's goroutine with the App's context, then
// the function it returns (if any) on fyne's goroutine. Every call to the
// core that may do I/O (SQLite, Ollama, files) goes through here.
func (a *App) background(work func(ctx context.Context) (apply func())) {
	a.goStart(func() {
		if apply := work(a.ctx); apply != nil {
			a.onUI(apply)
		}
	})
}

// onUI runs f on fyne's goroutine, unless the App has closed by then.
func (a *App) onUI(f func()) {
	if a.ctx.Err() != nil {
		return
	}
	a.do(func() {
		if a.ctx.Err() == nil {
			f()
		}
	})
}

// Follow keeps the desktop in step with the core until ctx ends or the
// App closes. One goroutine reacts to the core's events, every kind but
// the activity log's rows; the Log tab follows those on a subscription
// and a goroutine of its own (activityView.follow), so that a burst of
// requests cannot crowd the other events out of a subscriber's buffer,
// and it merges a burst in one update. Both touch widgets only through
// fyne.Do.
func (a *App) Follow(ctx context.Context) {
	ctx, stop := context.WithCancel(ctx)
	context.AfterFunc(a.ctx, stop)
	events := a.core.Events.Subscribe(ctx, slices.DeleteFunc(slices.Clone(followedKinds), isStreamKind)...)
	a.onUI(func() {
		a.refresh()
		// A question asked before the subscription (a client calling as
		// the app starts) has had no event: its popup opens now.
		a.questions.openAll()
	})
	if a.activity != nil {
		a.activity.follow(ctx)
	}
	a.followStreams(ctx) // follow_load.go
	a.goStart(func() {
		defer stop()
		a.handOn(events, a.urgent)
	})
}

// handOn hands fyne's goroutine the events, a burst in one function,
// until they close; those not urgent wait a little for company.
func (a *App) handOn(events <-chan agent.Event, urgent func(agent.Event) bool) {
	for batch := range batches(events, urgent, time.After) {
		a.onUI(func() {
			for _, e := range batch {
				a.handle(e)
			}
		})
	}
}

// followedKinds are the events Follow's goroutine handles: every kind the
// core publishes but EventActivity, which the Log tab follows itself
// (TestFollowedKinds checks the list against the core's kinds).
var followedKinds = []agent.EventKind{
	agent.EventAgentsChanged, agent.EventClientsChanged, agent.EventClientAgentsChanged, agent.EventProvidersChanged,
	agent.EventTurnStarted, agent.EventModelCall, agent.EventDelta, agent.EventToolCall, agent.EventTurnEnded,
	agent.EventQuestionAsked, agent.EventQuestionClosed, agent.EventApprovalRulesChanged, agent.EventToolHeld,
	agent.EventMemberProgress, agent.EventToolServersChanged,
}

// handle runs on fyne's goroutine.
func (a *App) handle(e agent.Event) {
	a.conversations.event(e)
	a.agents.tryEvent(e)
	switch e.Kind {
	case agent.EventAgentsChanged: // also pause and resume, from the tray or a client's CLI, and tool servers
		a.agents.refresh()
		a.agents.servers.refresh()
		a.toolServers.refresh()
		a.models.refresh() // which agents use each provider
		a.showState()      // which agents have a model: the servers' answers stand
	case agent.EventToolServersChanged: // the editor may now offer it
		a.agents.servers.refresh()
		a.toolServers.refresh()
	case agent.EventQuestionAsked:
		a.questionAsked(e.Question, false)
	case agent.EventClientsChanged:
		a.settings.refreshClients()
		a.activity.clientsChanged() // the names in the log
		a.showState()
	case agent.EventTurnStarted: // a client's call: it was used today
		a.stateLater.poke()
	case agent.EventProvidersChanged: // also from the command line
		a.models.refresh()
		a.agents.providersChanged()
		a.status.askServers()
	case agent.EventQuestionClosed:
		if a.questions.closed(e.Question) {
			if note := closedNote(e); note != "" {
				a.fy.SendNotification(fyne.NewNotification("Deskhand", note))
			}
		} else if !a.questions.listed(e.Question) {
			a.stateLater.poke() // never shown
			break
		}
		a.questions.refresh()
		a.showState()
	case agent.EventApprovalRulesChanged: // also from the command line
		a.approvals.refresh()
	case agent.EventToolHeld:
		a.toolServers.refresh()
		a.fy.SendNotification(fyne.NewNotification("Deskhand", heldNote(e)))
	}
}

// clientGrace is how long a question its calling client was asked too
// waits before it shows here. A client that answers at machine speed (an
// automated client, or its own rules) would otherwise flash a popup that
// takes the keyboard, and send a notification, for a question nobody could
// have read; a person answering in the client takes longer, and sees the
// popup close when they do.
const clientGrace = time.Second

// questionAsked shows a question waiting: in the Questions tab, in a popup
// and in a notification; a question its client was asked too once it has
// waited clientGrace.
func (a *App) questionAsked(id string, waited bool) {
	q, ok := a.questions.waiting(id)
	if !ok {
		a.stateLater.poke() // answered before it could be shown (questions.go)
		return
	}
	if q.ClientAsked && !waited {
		a.questions.after(clientGrace, func() { a.questionAsked(id, true) })
		return
	}
	a.questions.refresh()
	a.showState()
	a.notifyQuestion(id)
	a.openWhenNotTyping(id)
}

func (a *App) refresh() {
	a.agents.refresh()
	a.conversations.refresh()
	a.settings.refresh()
	a.models.refresh()
	a.questions.refresh()
	a.approvals.refresh()
	a.toolServers.refresh()
	a.showState()
	if a.status != nil {
		a.status.askServers()
	}
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

// Tab indexes: agents, questions, conversations, connect, settings, log.
const (
	tabAgents        = 0
	tabQuestions     = 1
	tabConversations = 2
	tabConnect       = 3
	tabSettings      = 4
	tabLog           = 5
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
	a.hidden = false
	if a.conversations != nil {
		a.tabsMayBeSeen()
	}
}

// tabSeen tells whether tab i can be seen: selected, and the window not
// closed to the tray (a screen tested alone, without tabs, always can).
func (a *App) tabSeen(i int) bool {
	return a.tabs == nil || !a.hidden && a.tabs.SelectedIndex() == i
}

// tabsMayBeSeen lets the tabs that draw only while seen catch up.
func (a *App) tabsMayBeSeen() {
	a.conversations.becameVisible()
	a.activity.becameVisible()
	a.questions.becameVisible()
}

// setTray rebuilds the tray menu and its icon.
func (a *App) setTray() {
	desk, ok := a.fy.(desktop.App)
	if !ok || !a.opts.Tray {
		return
	}
	items := a.trayItems()
	paused := a.core.Settings.Paused()
	menu, icon := menuText(items), trayIcon(a.opts, paused, len(a.core.Questions.Pending()))
	if a.trayMenu != nil && menu == a.trayShown.menu && icon == a.trayShown.icon {
		return
	}
	// Questions a client answers at once come and go with every turn
	// under load: the tray follows them at most every questionsEvery, a pause
	// or a resume at once.
	if a.trayMenu != nil && paused == a.trayShown.paused && !a.trayShown.pace.ready(a.status.now(), a.afterOnUI, a.showState) {
		return
	}
	a.trayShown.pace.last, a.trayShown.paused = a.status.now(), paused
	if menu != a.trayShown.menu || a.trayMenu == nil {
		a.trayMenu = fyne.NewMenu("Deskhand", items...)
		desk.SetSystemTrayMenu(a.trayMenu)
		a.trayShown.menu = menu
	}
	if icon != nil && icon != a.trayShown.icon {
		desk.SetSystemTrayIcon(icon)
		a.trayShown.icon = icon
	}
}

// menuText is what a menu's items show, to tell whether it changed: each
// item's label, check mark and whether it is disabled. An item's action
// follows from what it shows (pause or resume, an agent's switch).
func menuText(items []*fyne.MenuItem) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%q %t %t %t\n", it.Label, it.Checked, it.Disabled, it.IsSeparator)
	}
	return b.String()
}

// trayItems is the tray menu: the state and the questions waiting at the
// top, open, each agent's kill switch, connect, settings, pause, and
// Quit. Quit is ours, the last item and marked IsQuit: fyne 2.7 adds its
// own "Quit" to a menu whose last item is not one, but only to the copy
// it keeps, after drawing the tray, so that a rebuilt menu would lose it.
func (a *App) trayItems() []*fyne.MenuItem {
	paused, questions := a.core.Settings.Paused(), a.core.Questions.Pending()
	waiting, who := questionsWaiting(questions)
	state := fyne.NewMenuItem(trayStatusLine(paused, a.opts.ServerURL), nil)
	state.Disabled = true
	label := pendingLabel(waiting)
	if who != "" { // who waits, and for whom: "assistant is waiting for your answer."
		label = strings.TrimSuffix(who, ".") + "…"
	}
	pending := fyne.NewMenuItem(label, func() {
		a.Show()
		a.questions.openAll()
	})
	pending.Disabled = waiting == 0
	items := []*fyne.MenuItem{state, pending, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open Deskhand", a.Show), fyne.NewMenuItemSeparator()}
	for _, ag := range a.core.Agents.List() {
		label := agentLabel(ag)
		if ag.Enabled && ag.Backend != agent.BackendClient && ag.Model == "" {
			label += " (no model: it cannot answer)" // on, but not really served
		}
		item := fyne.NewMenuItem(label, nil)
		item.Checked = ag.Enabled
		item.Action = func() { a.agents.setEnabled(ag.Slug, !ag.Enabled) }
		items = append(items, item)
	}
	pause := fyne.NewMenuItem(pauseLabel(paused), func() { a.setPaused(!paused) })
	connect := fyne.NewMenuItem("Connect a client…", func() {
		a.showTab(tabConnect)
		a.connect.refresh()
	})
	settings := fyne.NewMenuItem("Settings…", func() { a.showTab(tabSettings) })
	quit := fyne.NewMenuItem("Quit Deskhand", a.quit)
	quit.IsQuit = true
	return append(items, fyne.NewMenuItemSeparator(), connect, settings, pause, fyne.NewMenuItemSeparator(), quit)
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
	return cmp.Or(o.TrayIcon, o.Icon)
}

// notifyQuestion tells the system a question waits: who asks, and what
// (an approval names its tool, never its raw arguments).
func (a *App) notifyQuestion(id string) {
	for _, q := range a.core.Questions.Pending() {
		if q.ID != id {
			continue
		}
		text := q.Text
		if q.Kind == agent.KindApproval {
			text = "Approve or deny it in Deskhand's window."
		}
		a.fy.SendNotification(fyne.NewNotification("Deskhand: "+questionTitle(q), text))
		return
	}
}

// WithFyneDo is the app's metadata saying what FyneApp.toml says to the
// fyne tool's builds: this app calls fyne on fyne's goroutine only
// (fyne.Do). Without it (any go build) fyne checks the goroutine of every
// refresh by parsing a stack trace, an eighth of the UI thread's time
// under load. changed is false when the metadata says so already.
func WithFyneDo(m fyne.AppMetadata, id string) (_ fyne.AppMetadata, changed bool) {
	if m.Migrations["fyneDo"] {
		return m, false
	}
	m.Migrations = maps.Clone(m.Migrations)
	if m.Migrations == nil {
		m.Migrations = map[string]bool{}
	}
	m.Migrations["fyneDo"] = true
	// An empty ID and name would make fyne look for FyneApp.toml again.
	m.ID, m.Name = cmp.Or(m.ID, id), cmp.Or(m.Name, "Deskhand")
	return m, true
}

// keptNote says where a secret typed now is kept: the keychain, or,
// without one, what happens instead.
func (a *App) keptNote(kept string) string {
	if p := a.opts.KeychainProblem; p != "" {
		return "⚠ " + strings.ToUpper(p[:1]) + p[1:]
	}
	return kept
}
