package desktop

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
)

// testUI stands in for fyne's goroutine: what the App hands to fyne.Do is
// queued, and the test runs it on its own goroutine, as fyne would on its.
type testUI struct {
	app    *App
	mu     sync.Mutex
	queued []func()
	grew   *sync.Cond // on mu: something was queued
}

func (u *testUI) do(f func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.queued = append(u.queued, f)
	u.grew.Broadcast()
}

// waitQueued waits until n functions wait for fyne's goroutine, without
// running them.
func (u *testUI) waitQueued(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.queued) < n {
		u.grew.Wait()
	}
}

// settle waits for the App's background work and runs what it handed to
// fyne's goroutine, until nothing is left.
func (u *testUI) settle() {
	for {
		u.app.work.Wait()
		u.mu.Lock()
		fs := u.queued
		u.queued = nil
		u.mu.Unlock()
		if len(fs) == 0 {
			return
		}
		for _, f := range fs {
			f()
		}
	}
}

func testOptions() Options { return Options{ServerURL: "http://127.0.0.1:7345/mcp"} }

// newTestApp is the whole desktop on fyne's test driver, closed when the
// test ends.
func newTestApp(t *testing.T, core Core) (*App, *testUI) {
	t.Helper()
	a, u := withTestUI(t, New(test.NewTempApp(t), core, testOptions()))
	// The list's window ends at the next settle: reads stay coalesced, and
	// a test sees the last one (conversations_load_test.go drives the
	// window itself).
	a.conversations.lister.after = func(_ time.Duration, f func()) { a.onUI(f) }
	return a, u
}

// newShell is the App without its screens, for testing one screen.
func newShell(t *testing.T) (*App, *testUI) {
	t.Helper()
	return withTestUI(t, newApp(test.NewTempApp(t), testOptions()))
}

func withTestUI(t *testing.T, a *App) (*App, *testUI) {
	u := &testUI{app: a}
	u.grew = sync.NewCond(&u.mu)
	a.do = u.do
	t.Cleanup(a.Close)
	return a, u
}

// agentsScreen is the Agents tab alone, on its fake.
func agentsScreen(t *testing.T, core *fakeAgents) (*agentsView, *testUI) {
	t.Helper()
	a, u := newShell(t)
	if core.fakeProviders == nil {
		core.fakeProviders = &fakeProviders{}
	}
	a.agents = newAgentsView(a, newFakeCore(fakeCore{fakeAgents: core}).asCore())
	a.win.SetContent(a.agents.content())
	return a.agents, u
}

// settingsScreen is the Settings tab alone, on its fake.
func settingsScreen(t *testing.T, core *fakeSettings) (*settingsView, *testUI) {
	t.Helper()
	a, u := newShell(t)
	a.settings = newSettingsView(a, newFakeCore(fakeCore{fakeSettings: core}).asCore())
	login := &fakeLoginItem{}
	a.settings.launchesAtLogin, a.settings.setLaunchAtLogin = login.enabled, login.set
	a.win.SetContent(a.settings.content())
	return a.settings, u
}

// modelsScreen is Settings → Models alone, on its fake.
func modelsScreen(t *testing.T, core *fakeProviders) (*modelsView, *testUI) {
	t.Helper()
	a, u := newShell(t)
	a.models = newModelsView(a, newFakeCore(fakeCore{fakeProviders: core}).asCore())
	a.win.SetContent(a.models.content())
	return a.models, u
}

// fakeLoginItem is the OS's login item in memory; fail makes it refuse.
type fakeLoginItem struct {
	mu   sync.Mutex
	on   bool
	sets []bool
	fail error
}

func (f *fakeLoginItem) enabled() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on, f.fail
}

func (f *fakeLoginItem) set(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, on)
	if f.fail != nil {
		return f.fail
	}
	f.on = on
	return nil
}

// fakeAgents is the Agents tab's core (agentsCore); its providers are
// Settings → Models' fake, shared with it in a fakeCore.
type fakeAgents struct {
	*fakeProviders
	mu      sync.Mutex
	agents  []agent.Agent
	saved   []agent.Agent
	enabled map[string]bool
	saveErr error
	// saveGate, when set, holds SaveAgent until it closes or the call's
	// context ends; saving is told when SaveAgent is entered.
	saveGate chan struct{}
	saving   chan context.Context

	runs    []agent.RunRequest
	runGate chan struct{} // Run waits for it when set
}

func (f *fakeAgents) List() []agent.Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Agent(nil), f.agents...)
}

func (f *fakeAgents) AvailableTools() []agent.ToolInfo {
	return []agent.ToolInfo{
		{Name: "read_file", Description: "Read a text file in the agent's folders."},
		{Name: "write_file", Description: "Write a text file in the agent's folders.", NeedsApproval: true},
	}
}

func (f *fakeAgents) Save(ctx context.Context, a agent.Agent) (agent.Agent, error) {
	if f.saving != nil {
		f.saving <- ctx
	}
	if f.saveGate != nil {
		select {
		case <-f.saveGate:
		case <-ctx.Done():
			return agent.Agent{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.saveErr != nil {
		return agent.Agent{}, f.saveErr
	}
	f.saved = append(f.saved, a)
	if a.ID == "" {
		a.ID = "new-id"
	}
	f.agents = append(f.agents, a)
	return a, nil
}

func (f *fakeAgents) SetEnabled(_ context.Context, slug string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.enabled == nil {
		f.enabled = map[string]bool{}
	}
	f.enabled[slug] = on
	return nil
}

func (f *fakeAgents) Delete(_ context.Context, slug string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.agents {
		if a.Slug == slug {
			f.agents = append(f.agents[:i], f.agents[i+1:]...)
			return nil
		}
	}
	return agent.Userf(agent.ErrNotFound, "no agent named %q", slug)
}

func (f *fakeAgents) PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error {
	progress(agent.PullProgress{Status: "pulling", Completed: 50, Total: 100})
	if strings.HasPrefix(name, "missing") {
		return agent.Userf(nil, "Ollama could not pull %q", name)
	}
	progress(agent.PullProgress{Status: "success", Completed: 100, Total: 100})
	return nil
}

func (f *fakeAgents) Run(_ context.Context, req agent.RunRequest) (*agent.RunResult, error) {
	f.mu.Lock()
	f.runs = append(f.runs, req)
	gate := f.runGate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return &agent.RunResult{Text: "echo: " + req.Message}, nil
}

// fakeQuestions is the Questions tab's and the popups' core
// (Questions).
type fakeQuestions struct {
	mu       sync.Mutex
	pending  []agent.Question
	answers  []map[string]any
	declined []string
}

func (f *fakeQuestions) Pending() []agent.Question {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Question(nil), f.pending...)
}

// setPending replaces the pending questions, as the core does when one is
// answered elsewhere; the App's background work may be reading them.
func (f *fakeQuestions) setPending(qs ...agent.Question) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = qs
}

func (f *fakeQuestions) Answer(id string, content map[string]any, declined bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.pending {
		if q.ID == id {
			if declined {
				f.declined = append(f.declined, id)
				return nil
			}
			if _, err := q.ParseAnswer(content, agent.ByDesktop); err != nil {
				return err
			}
			f.answers = append(f.answers, content)
			return nil
		}
	}
	return agent.ErrQuestionClosed
}

// fakeConversations is the Conversations tab's store and stop button;
// the clients and questions come from the other fakes (fakeCore).
type fakeConversations struct {
	mu            sync.Mutex
	conversations []agent.ConversationSummary
	messages      map[string][]agent.Message
	turns         map[string][]agent.Turn
	cancelled     []string
	// live and questions are the running turns and stored questions, by
	// conversation (conversations_fakes_test.go).
	live      map[string]agent.LiveTurn
	questions map[string][]agent.Question
	// subs are the team members' conversations, by the turn that called
	// them (transcript_team_test.go).
	subs map[string][]agent.Conversation
	// searchOnly are conversations beyond the recent list, found by Search
	// (search_test.go).
	searchOnly []agent.ConversationSummary
}

func (f *fakeConversations) Recent(context.Context, int) ([]agent.ConversationSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.ConversationSummary(nil), f.conversations...), nil
}

func (f *fakeConversations) Get(_ context.Context, id string) (agent.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range slices.Concat(f.conversations, f.searchOnly) {
		if c.ID == id {
			return c.Conversation, nil
		}
	}
	return agent.Conversation{}, agent.ErrNotFound
}

func (f *fakeConversations) Transcript(_ context.Context, id string) ([]agent.Message, []agent.Turn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.messages[id], f.turns[id], nil
}

func (f *fakeConversations) CancelTurn(conversationID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, conversationID)
	return true
}

// fakeSettings is the Settings tab's core (settingsCore).
type fakeSettings struct {
	mu       sync.Mutex
	clients  []agent.Client
	revoked  []string
	rotated  []string
	settings map[string]string
	visible  map[string][]string // client name → slugs it sees; absent: all (clientagents_test.go)
	// calls counts each client's tool calls, by ID, and callsSince is
	// the time ClientCalls was last asked from (activity_fakes_test.go).
	calls      map[string]int
	callsSince time.Time
}

func (f *fakeSettings) List() []agent.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Client(nil), f.clients...)
}

func (f *fakeSettings) Create(_ context.Context, name string) (agent.Client, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == "" {
		return agent.Client{}, "", agent.Userf(nil, "client name %q is not valid", name)
	}
	c := agent.Client{ID: "id-" + name, Name: name, CreatedAt: time.Now()}
	f.clients = append(f.clients, c)
	return c, "dh_secret-for-" + name, nil
}

func (f *fakeSettings) Revoke(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, name)
	return nil
}

func (f *fakeSettings) Rotate(_ context.Context, name string) (agent.Client, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rotated = append(f.rotated, name)
	return agent.Client{ID: "id-" + name, Name: name}, "dh_rotated-for-" + name, nil
}

func (f *fakeSettings) Get(_ context.Context, key, def string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.settings[key]; ok {
		return v, nil
	}
	return def, nil
}

func (f *fakeSettings) Set(_ context.Context, key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settings == nil {
		f.settings = map[string]string{}
	}
	f.settings[key] = value
	return nil
}

// fakeProviders is Settings → Models' core (providersCore), and the
// agent editor's providers.
type fakeProviders struct {
	mu        sync.Mutex
	providers []agent.ProviderStatus
	saves     []providerSave
	deleted   []string
	models    map[string][]string        // by provider; a provider without an entry does not answer
	infos     map[string]agent.ModelInfo // by model
	describes []string                   // "provider/model" asked
	// hold, when set, names a provider whose ProviderModels waits for
	// gate to close.
	hold string
	gate chan struct{}
	// found are the servers Find finds, by the address typed.
	found map[string]agent.Provider
}

// Find saves the provider found at address, with its models.
func (f *fakeProviders) Find(ctx context.Context, address string) (agent.Provider, []string, error) {
	f.mu.Lock()
	p, ok := f.found[address]
	f.mu.Unlock()
	if !ok {
		return agent.Provider{}, nil, agent.Userf(nil, "nothing answered at %s", address)
	}
	if _, err := f.Save(ctx, p, agent.KeyChange{}); err != nil {
		return agent.Provider{}, nil, err
	}
	models, err := f.Models(ctx, p.Name)
	return p, models, err
}

// providerSave is one call of SaveProvider.
type providerSave struct {
	Provider agent.Provider
	Key      agent.KeyChange
}

func (f *fakeProviders) List() []agent.ProviderStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.ProviderStatus(nil), f.providers...)
}

func (f *fakeProviders) Save(_ context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saves = append(f.saves, providerSave{p, key})
	if p.Kind == agent.ProviderOpenAICompatible && p.BaseURL == "" {
		return agent.Provider{}, agent.Userf(nil, "an OpenAI-compatible provider needs the server's address")
	}
	for i, s := range f.providers {
		if s.Name == p.Name {
			f.providers[i].Provider = p
			if key.Set {
				f.providers[i].HasKey = key.Key != ""
			}
			return p, nil
		}
	}
	f.providers = append(f.providers, agent.ProviderStatus{Provider: p, HasKey: key.Set && key.Key != ""})
	return p, nil
}

func (f *fakeProviders) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.providers {
		if s.Name != name {
			continue
		}
		if len(s.UsedBy) > 0 {
			return agent.Userf(nil, "provider %s is used by %s: move them to another provider first", name, strings.Join(s.UsedBy, ", "))
		}
		f.deleted = append(f.deleted, name)
		f.providers = append(f.providers[:i], f.providers[i+1:]...)
		return nil
	}
	return agent.Userf(agent.ErrNotFound, "no provider named %q", name)
}

func (f *fakeProviders) Models(_ context.Context, name string) ([]string, error) {
	f.mu.Lock()
	hold, gate := f.hold, f.gate
	f.mu.Unlock()
	if name == hold {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	names, ok := f.models[name]
	if !ok {
		return nil, agent.Userf(nil, "cannot connect to provider %s: connection refused", name)
	}
	return append([]string(nil), names...), nil
}

func (f *fakeProviders) DescribeModel(_ context.Context, provider, model string) (agent.ModelInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes = append(f.describes, provider+"/"+model)
	if info, ok := f.infos[model]; ok {
		return info, nil
	}
	return agent.ModelInfo{Name: model}, nil
}

// fakeCore is the whole desktop's core: the screens' fakes together, plus
// the tray's pause switch and an event stream that stays quiet.
type fakeCore struct {
	*fakeAgents
	*fakeQuestions
	*fakeConversations
	*fakeSettings
	*fakeProviders
	pause *fakePause // the pause switch, when a test sets one (shell_fakes_test.go)
	// activity is the activity log, when a test sets one; without it the
	// log is empty (activity_fakes_test.go).
	activity *fakeActivity
	*fakeToolServers
}

// newFakeCore fills in the fakes left nil.
func newFakeCore(c fakeCore) *fakeCore {
	if c.fakeAgents == nil {
		c.fakeAgents = &fakeAgents{}
	}
	if c.fakeQuestions == nil {
		c.fakeQuestions = &fakeQuestions{}
	}
	if c.fakeConversations == nil {
		c.fakeConversations = &fakeConversations{}
	}
	if c.fakeSettings == nil {
		c.fakeSettings = &fakeSettings{}
	}
	if c.fakeProviders == nil {
		c.fakeProviders = cmp.Or(c.fakeAgents.fakeProviders, &fakeProviders{})
	}
	c.fakeAgents.fakeProviders = c.fakeProviders
	if c.fakeToolServers == nil {
		c.fakeToolServers = &fakeToolServers{}
	}
	return &c
}

// asCore hands the fakes to the desktop, feature by feature.
func (f *fakeCore) asCore() Core {
	var log ActivityLog = emptyLog{}
	if f.activity != nil {
		log = f.activity
	}
	return Core{
		Agents:        f.fakeAgents,
		Providers:     providersFake{f.fakeProviders, f.fakeAgents},
		Clients:       f.fakeSettings,
		ToolServers:   f.fakeToolServers,
		Conversations: conversationsFake{f.fakeConversations, f.fakeAgents},
		Questions:     f.fakeQuestions,
		Activity:      log,
		Events:        quietEvents{},
		Settings:      settingsFake{f.fakeSettings, f.pause},
		Approvals:     f.fakeQuestions.Approvals(),
	}
}

// providersFake is Settings → Models' fake, with the pulls of the
// Agents tab's.
type providersFake struct {
	*fakeProviders
	agents *fakeAgents
}

func (p providersFake) PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error {
	return p.agents.PullModel(ctx, name, progress)
}

// conversationsFake is the Conversations tab's fake, with the runs of the
// Agents tab's.
type conversationsFake struct {
	*fakeConversations
	agents *fakeAgents
}

func (c conversationsFake) Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error) {
	return c.agents.Run(ctx, req)
}

// settingsFake is the Settings fake with the tray's pause switch.
type settingsFake struct {
	*fakeSettings
	pause *fakePause // when a test sets one (shell_fakes_test.go)
}

func (s settingsFake) SetPaused(on bool) {
	if s.pause != nil {
		s.pause.set(on)
	}
}

func (s settingsFake) Paused() bool { return s.pause != nil && s.pause.get() }

// quietEvents is an event stream that stays quiet.
type quietEvents struct{}

func (quietEvents) Subscribe(ctx context.Context, _ ...agent.EventKind) <-chan agent.Event {
	ch := make(chan agent.Event)
	context.AfterFunc(ctx, func() { close(ch) })
	return ch
}

func (e quietEvents) SubscribeWhere(ctx context.Context, _ func(agent.Event) bool, kinds ...agent.EventKind) <-chan agent.Event {
	return e.Subscribe(ctx, kinds...)
}

// emptyLog is an activity log with no rows.
type emptyLog struct{}

func (emptyLog) List(context.Context, agent.ActivityFilter) ([]agent.ActivityRow, error) {
	return nil, nil
}

func (emptyLog) Enabled() bool { return true }

// agentList and clientList answer a screen that only lists agents or
// clients; any other call is a test's mistake and panics.
type agentList struct {
	Agents
	list []agent.Agent
}

func (l agentList) List() []agent.Agent { return l.list }

type clientList struct {
	Clients
	list []agent.Client
}

func (l clientList) List() []agent.Client { return l.list }
