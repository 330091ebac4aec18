package desktop

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

func TestStatusTexts(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	assistant := agent.Agent{ID: "1", Slug: "assistant", Enabled: true, Provider: "ollama"}
	ready := agent.Agent{ID: "2", Slug: "writer", Enabled: true, Provider: "ollama", Model: "qwen3"}
	off := agent.Agent{ID: "3", Slug: "off", Provider: "ollama"}
	sampled := agent.Agent{ID: "4", Slug: "borrower", Enabled: true, Backend: agent.BackendClient}
	other := agent.Agent{ID: "5", Slug: "other", Enabled: true}
	clients := []agent.Client{
		{Name: "today", LastUsedAt: now.Add(-time.Hour)},
		{Name: "yesterday", LastUsedAt: now.Add(-20 * time.Hour)},
		{Name: "never"},
		{Name: "revoked", LastUsedAt: now, RevokedAt: now},
	}
	ollama3 := serverState{Name: "ollama", Kind: agent.ProviderOllama, Answered: true, Models: 3}
	lmEmpty := serverState{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, Answered: true}
	silent := serverState{Name: "work", Kind: agent.ProviderOpenAI}
	for _, c := range []struct {
		name           string
		s              status
		state, agents  string
		servers, usage string
		canRun         bool
	}{
		{"first run, not asked yet", statusOf([]agent.Agent{assistant}, nil, false, nil, now),
			"Serving", "0 agents served · assistant has no model", "Asking the model servers…", "No client today", false},
		{"paused", statusOf([]agent.Agent{ready, off, sampled}, nil, true, clients, now),
			"Paused", "No agent served", "Asking the model servers…", "1 client today", true},
		{"serving", withServers(statusOf([]agent.Agent{assistant, ready, off, sampled, other}, nil, false, clients[:1], now), ollama3, silent),
			"Serving", "2 agents served · 2 agents have no model", "Ollama: 3 models · work did not answer", "1 client today", true},
		{"nobody answered", withServers(statusOf([]agent.Agent{ready}, nil, false, nil, now), silent),
			"Serving", "1 agent served", "No model server answered", "No client today", false},
		{"a model on another server", withServers(statusOf([]agent.Agent{{Slug: "w", Enabled: true, Provider: "work", Model: "gpt"}}, nil, false, nil, now), ollama3),
			"Serving", "1 agent served", "Ollama: 3 models", "No client today", false},
		{"no provider", withServers(statusOf(nil, nil, false, nil, now)),
			"Serving", "0 agents served", "No model server set up", "No client today", false},
		{"a server without models", withServers(statusOf([]agent.Agent{ready}, nil, false, nil, now), lmEmpty),
			"Serving", "1 agent served", "LM Studio: 0 models", "No client today", false},
	} {
		if got := c.s.stateText(); got != c.state {
			t.Errorf("%s: state %q, want %q", c.name, got, c.state)
		}
		if got := c.s.agentsText(); got != c.agents {
			t.Errorf("%s: agents %q, want %q", c.name, got, c.agents)
		}
		if got := c.s.serversText(); got != c.servers {
			t.Errorf("%s: servers %q, want %q", c.name, got, c.servers)
		}
		if got := c.s.clientsText(); got != c.usage {
			t.Errorf("%s: clients %q, want %q", c.name, got, c.usage)
		}
		if got := c.s.canRun(); got != c.canRun {
			t.Errorf("%s: canRun %v, want %v", c.name, got, c.canRun)
		}
	}
	s := statusOf(nil, []agent.Question{question("a"), question("b")}, false, []agent.Client{{LastUsedAt: now}, {LastUsedAt: now}}, now)
	if s.Waiting != 2 || s.clientsText() != "2 clients today" {
		t.Errorf("waiting %d, clients %q", s.Waiting, s.clientsText())
	}
	for _, c := range []struct{ got, want string }{
		{questionsTabTitle(0), "Questions"},
		{questionsTabTitle(2), "Questions (2)"},
		{trayStatusLine(false, "http://127.0.0.1:7345/mcp"), "Serving at 127.0.0.1:7345"},
		{trayStatusLine(true, "http://127.0.0.1:7345/mcp"), "Paused: no agent is served"},
		{trayStatusLine(false, ""), "Not serving"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func withServers(s status, servers ...serverState) status {
	s.Servers, s.Asked = servers, true
	return s
}

func TestOnboardingSteps(t *testing.T) {
	now := time.Now()
	assistant := agent.Agent{ID: "1", Slug: "assistant", Name: "Assistant", Enabled: true, Provider: "ollama"}
	other := agent.Agent{ID: "2", Slug: "aaa", Enabled: true, Provider: "ollama"}
	withModel := assistant
	withModel.Model = "qwen3"
	otherWithModel := other
	otherWithModel.Model = "llama3.2"
	for _, c := range []struct {
		name              string
		s                 status
		server, model     string
		serverOK, modelOK bool
		agent             string
	}{
		{"not asked", statusOf([]agent.Agent{other, assistant}, nil, false, nil, now),
			"Looking for a model server", "Pick a model for Assistant (assistant)", false, false, "assistant"},
		{"nothing answered", withServers(statusOf([]agent.Agent{assistant}, nil, false, nil, now), serverState{Name: "ollama"}),
			"No model server answered. Start yours", "Pick a model for Assistant (assistant)", false, false, "assistant"},
		{"Ollama without models", withServers(statusOf([]agent.Agent{assistant}, nil, false, nil, now), serverState{Name: "ollama", Answered: true}),
			"Ollama answered but has no model yet", "Pick a model", false, false, "assistant"},
		{"Ollama with models", withServers(statusOf([]agent.Agent{other}, nil, false, nil, now), serverState{Name: "ollama", Answered: true, Models: 2}),
			"Ollama answered, with 2 models.", "Pick a model for aaa", true, false, "aaa"},
		{"ready", withServers(statusOf([]agent.Agent{withModel}, nil, false, nil, now), serverState{Name: "ollama", Answered: true, Models: 1}),
			"Ollama answered, with 1 model.", "Assistant (assistant) runs on qwen3.", true, true, "assistant"},
		{"another agent runs", withServers(statusOf([]agent.Agent{assistant, otherWithModel}, nil, false, nil, now), serverState{Name: "ollama", Answered: true, Models: 1}),
			"Ollama answered, with 1 model.", "aaa runs on llama3.2.", true, true, "aaa"},
		{"no agent", withServers(statusOf(nil, nil, false, nil, now), serverState{Name: "ollama", Answered: true, Models: 1}),
			"Ollama answered", "Create an agent", true, false, ""},
	} {
		o := onboardingOf(c.s)
		if !strings.HasPrefix(o.Server, c.server) || o.ServerDone != c.serverOK {
			t.Errorf("%s: step 1 %q (done %v), want %q (done %v)", c.name, o.Server, o.ServerDone, c.server, c.serverOK)
		}
		if !strings.HasPrefix(o.Model, c.model) || o.ModelDone != c.modelOK {
			t.Errorf("%s: step 2 %q (done %v), want %q (done %v)", c.name, o.Model, o.ModelDone, c.model, c.modelOK)
		}
		if o.Agent.Slug != c.agent || o.HasAgent != (c.agent != "") {
			t.Errorf("%s: agent %q, want %q", c.name, o.Agent.Slug, c.agent)
		}
	}
}

// servingCore is a core with one working agent, Ollama answering with
// two models, a client that called today, and a pause switch.
func servingCore() *fakeCore {
	providers := &fakeProviders{
		providers: []agent.ProviderStatus{{Provider: agent.Provider{Name: "ollama", Kind: agent.ProviderOllama}}},
		models:    map[string][]string{"ollama": {"llama3.2", "qwen3"}},
	}
	return newFakeCore(fakeCore{
		fakeAgents:    &fakeAgents{agents: []agent.Agent{{ID: "1", Slug: "assistant", Enabled: true, Provider: "ollama", Model: "qwen3"}}},
		fakeSettings:  &fakeSettings{clients: []agent.Client{{ID: "c", Name: "cursor", LastUsedAt: time.Now()}}},
		fakeProviders: providers,
		pause:         &fakePause{},
	})
}

func TestStatusBarAndPause(t *testing.T) {
	core := servingCore()
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	b := a.status
	shown := []string{b.state.Text, b.address.Text, b.servers.Text, b.agents.Text, b.clients.Text}
	if want := []string{"Serving", "127.0.0.1:7345", "Ollama: 2 models", "1 agent served", "1 client today"}; !cmp.Equal(shown, want) {
		t.Errorf("status bar shows %q, want %q", shown, want)
	}
	if a.status.banner.Visible() || !a.onboarding.box.Visible() || !strings.Contains(a.onboarding.title.Text, "step 3 of 3") {
		t.Errorf("serving with a model, never tried: banner shown %v, onboarding shown %v at %q", a.status.banner.Visible(), a.onboarding.box.Visible(), a.onboarding.title.Text)
	}
	test.Tap(a.onboarding.connect)
	if a.onboarding.box.Visible() || a.tabs.SelectedIndex() != tabConnect {
		t.Errorf("Connect a client…: panel shown %v, tab %d", a.onboarding.box.Visible(), a.tabs.SelectedIndex())
	}
	test.Tap(b.copyAddr)
	if got := a.fy.Clipboard().Content(); got != "http://127.0.0.1:7345/mcp" {
		t.Errorf("copied %q", got)
	}

	test.Tap(b.pause) // the window's own switch
	if !core.pause.get() || !a.status.banner.Visible() || b.state.Text != "Paused" || b.pause.Text != "Resume" {
		t.Fatalf("after Pause: core paused %v, banner %v, state %q, button %q", core.pause.get(), a.status.banner.Visible(), b.state.Text, b.pause.Text)
	}
	if items := a.trayItems(); items[0].Label != "Paused: no agent is served" {
		t.Errorf("tray says %q while paused", items[0].Label)
	}
	if a.pauseItem.Label != "Resume serving" {
		t.Errorf("menu says %q while paused", a.pauseItem.Label)
	}
	test.Tap(a.status.resume) // the banner's Resume
	if core.pause.get() || a.status.banner.Visible() || b.state.Text != "Serving" {
		t.Errorf("after Resume: core paused %v, banner %v, state %q", core.pause.get(), a.status.banner.Visible(), b.state.Text)
	}

	// The tray pauses through the core; its event brings the window in step.
	core.asCore().Settings.SetPaused(true)
	a.handle(agent.Event{Kind: agent.EventAgentsChanged})
	ui.settle()
	if !a.status.banner.Visible() || b.state.Text != "Paused" {
		t.Errorf("paused from the tray: banner %v, state %q", a.status.banner.Visible(), b.state.Text)
	}
	pressShortcut(t, a, fyne.KeyP)
	if core.pause.get() || a.status.banner.Visible() {
		t.Errorf("Ctrl+P did not resume: paused %v", core.pause.get())
	}
}

func TestStatusBarAsksTheServersAgain(t *testing.T) {
	core := servingCore()
	core.fakeProviders.models = map[string][]string{} // Ollama is not running
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	if a.status.servers.Text != "No model server answered" {
		t.Errorf("servers: %q", a.status.servers.Text)
	}
	core.fakeProviders.mu.Lock()
	core.fakeProviders.models["ollama"] = []string{"qwen3"}
	core.fakeProviders.mu.Unlock()
	test.Tap(a.status.servers)
	ui.settle()
	if a.status.servers.Text != "Ollama: 1 model" {
		t.Errorf("after asking again: %q", a.status.servers.Text)
	}
	// A late answer does not overwrite a newer one.
	held := &holdFirstAsk{Providers: a.status.core.Providers, entered: make(chan struct{}), gate: make(chan struct{})}
	a.status.core.Providers = held
	a.status.askServers()
	<-held.entered // the first ask waits in ProviderModels
	core.fakeProviders.mu.Lock()
	core.fakeProviders.models["ollama"] = []string{"qwen3", "llama3.2", "phi4"}
	core.fakeProviders.mu.Unlock()
	a.status.askServers() // answered at once
	ui.waitQueued(1)      // its answer waits for fyne's goroutine
	core.fakeProviders.mu.Lock()
	core.fakeProviders.models["ollama"] = []string{"stale"} // what the held ask will read
	core.fakeProviders.mu.Unlock()
	close(held.gate)
	ui.settle()
	if a.status.servers.Text != "Ollama: 3 models" {
		t.Errorf("after two asks: %q (the older answer won)", a.status.servers.Text)
	}
}

func TestQuestionsTabAndTrayCount(t *testing.T) {
	core := servingCore()
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	if a.tabs.Items[tabQuestions].Text != "Questions" {
		t.Errorf("no question: tab %q", a.tabs.Items[tabQuestions].Text)
	}
	core.fakeQuestions.setPending(question("q1"), question("q2"))
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q2"})
	if a.tabs.Items[tabQuestions].Text != "Questions (2)" {
		t.Errorf("two questions: tab %q", a.tabs.Items[tabQuestions].Text)
	}
	items := a.trayItems()
	if items[1].Label != "2 questions waiting, from assistant…" || items[1].Disabled {
		t.Errorf("tray's questions line: %q (disabled %v)", items[1].Label, items[1].Disabled)
	}
	core.fakeQuestions.setPending()
	later := time.Now().Add(questionsEvery) // the title changes at most every questionsEvery
	a.status.now = func() time.Time { return later }
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1"})
	if a.tabs.Items[tabQuestions].Text != "Questions" || !a.trayItems()[1].Disabled {
		t.Errorf("all answered: tab %q", a.tabs.Items[tabQuestions].Text)
	}
}

func TestTrayMenu(t *testing.T) {
	a, _ := newTestApp(t, servingCore().asCore())
	items := a.trayItems()
	if items[0].Label != "Serving at 127.0.0.1:7345" || !items[0].Disabled {
		t.Errorf("first line %q, disabled %v", items[0].Label, items[0].Disabled)
	}
	var quits []string
	for _, it := range items {
		if it.IsQuit || strings.Contains(it.Label, "Quit") {
			quits = append(quits, it.Label)
		}
	}
	last := items[len(items)-1]
	if !cmp.Equal(quits, []string{"Quit Deskhand"}) || !last.IsQuit || last.Action == nil {
		t.Errorf("quit items %q; the last is %q (IsQuit %v)", quits, last.Label, last.IsQuit)
	}
	var labels []string
	for _, it := range items {
		if !it.IsSeparator {
			labels = append(labels, it.Label)
		}
	}
	want := []string{"Serving at 127.0.0.1:7345", "No questions waiting", "Open Deskhand", "assistant",
		"Connect a client…", "Settings…", "Pause serving", "Quit Deskhand"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("tray menu (-want +got):\n%s", diff)
	}
}

func TestKeyboard(t *testing.T) {
	a, _ := newTestApp(t, servingCore().asCore())
	for i, key := range tabKeys {
		pressShortcut(t, a, key)
		if a.tabs.SelectedIndex() != i {
			t.Errorf("Ctrl+%d selected tab %d", i+1, a.tabs.SelectedIndex())
		}
	}
	// A dialog shown through the App: Escape closes it as Cancel would.
	answered := []bool{}
	a.showDialog(dialog.NewConfirm("Delete agent?", "It cannot be undone.", func(ok bool) { answered = append(answered, ok) }, a.win), nil)
	if a.win.Canvas().Overlays().Top() == nil {
		t.Fatal("the dialog is not shown")
	}
	pressEscape(a)
	if a.win.Canvas().Overlays().Top() != nil || !cmp.Equal(answered, []bool{false}) || len(a.dialogs) != 0 {
		t.Errorf("after Escape: overlay %v, answers %v, tracked %d", a.win.Canvas().Overlays().Top(), answered, len(a.dialogs))
	}
	// Any other dialog of the window closes too.
	dialog.ShowInformation("Saved", "Your agent is saved.", a.win)
	pressEscape(a)
	if a.win.Canvas().Overlays().Top() != nil {
		t.Error("Escape left a dialog open")
	}
	if a.closeTopDialog() {
		t.Error("Escape with no dialog reported closing one")
	}
	// Exactly one Quit in the menu, so that fyne adds none of its own.
	var quits int
	for _, m := range a.win.MainMenu().Items {
		for _, it := range m.Items {
			if it.IsQuit {
				quits++
			}
		}
	}
	if last := a.win.MainMenu().Items[0].Items; quits != 1 || !last[len(last)-1].IsQuit {
		t.Errorf("%d quit items in the main menu", quits)
	}
}

func TestCloseToTrayTellsOnce(t *testing.T) {
	a, _ := newTestApp(t, servingCore().asCore())
	a.win.Show()
	test.AssertNotificationSent(t, fyne.NewNotification("Deskhand is still running",
		"Your agents are still served. Open the window again, or quit, from Deskhand's icon in the tray."), a.closeToTray)
	a.win.Show()
	test.AssertNotificationSent(t, nil, a.closeToTray)
	if !a.fy.Preferences().Bool(closedToTrayKey) {
		t.Error("not remembered")
	}
}

// TestNoHookOnFyneStop: New leaves fyne's stop hook unset (New says why:
// a hook fyne hands its main loop as the loop shuts down can be lost, and
// the process hung at quit under make load). fyne has no getter for the
// hook, so the test reads its field.
func TestNoHookOnFyneStop(t *testing.T) {
	fy := test.NewTempApp(t)
	a := New(fy, newFakeCore(fakeCore{fakeAgents: &fakeAgents{}}).asCore(), testOptions())
	t.Cleanup(a.Close)
	hook := reflect.ValueOf(fy.Lifecycle()).Elem().FieldByName("onStopped")
	if !hook.IsValid() || hook.Kind() != reflect.Func {
		t.Fatalf("fyne's lifecycle has no onStopped func (%v): see that New sets no stop hook in this fyne", hook.Kind())
	}
	if !hook.IsNil() {
		t.Error("New set fyne's stop hook")
	}
}
