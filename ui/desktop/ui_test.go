package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

func TestEditorSavesAnAgent(t *testing.T) {
	core := &fakeAgents{}
	v, ui := agentsScreen(t, core)
	v.newAgent()
	test.Type(v.name, "Researcher") // the slug follows
	test.Type(v.prompt, "Find sources.")
	test.Type(v.model, "qwen3:8b")
	test.Tap(v.clientMayApprove) // kept, though only a client asked may approve
	v.routing.SetSelected(routingWord(agent.RouteDesktop))
	test.Type(v.schema, `{"type":"object"}`)
	test.Tap(v.tools[1].use) // write_file: asks first by default
	test.Tap(v.tools[0].use)
	test.Type(v.folders, "/home/ada/notes\n\n/tmp/x")
	test.Type(v.starters, "Plan my week\n\nSummarise my notes")
	test.Type(v.reachable, "nas.local:8080\n\n192.168.1.20:11434")
	if !strings.Contains(v.whoAsked.Text, "come to you here, on this computer") {
		t.Errorf("who is asked, routed to the desktop: %q", v.whoAsked.Text)
	}
	if !v.clientMayApprove.Disabled() {
		t.Error("the client may approve, though it is not asked")
	}
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 {
		t.Fatalf("saved %d agents; status %q", len(core.saved), v.status.Text)
	}
	got := core.saved[0]
	want := agent.Agent{Name: "Researcher", Slug: "researcher", Prompt: "Find sources.", Model: "qwen3:8b",
		Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Routing: agent.RouteDesktop, Conversations: true, Enabled: true,
		ResponseSchema: json.RawMessage(`{"type":"object"}`),
		Tools:          []agent.AgentTool{{Name: "read_file"}, {Name: "write_file", NeedsApproval: true}},
		Folders:        []string{"/home/ada/notes", "/tmp/x"},
		StarterPrompts: []string{"Plan my week", "Summarise my notes"},
		ReachableHosts: []string{"nas.local:8080", "192.168.1.20:11434"}, ClientMayApprove: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("saved agent (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(v.status.Text, "Saved") {
		t.Errorf("status = %q", v.status.Text)
	}
}

func TestEditorRefusesABadSchema(t *testing.T) {
	core := &fakeAgents{}
	v, ui := agentsScreen(t, core)
	test.Type(v.slug, "x")
	test.Type(v.schema, `[1, 2`)
	if !strings.Contains(v.schemaHint.Text, "not valid JSON") {
		t.Errorf("hint while typing = %q", v.schemaHint.Text)
	}
	test.Tap(v.save)
	if len(core.saved) != 0 || !strings.Contains(v.status.Text, "response schema") {
		t.Errorf("saved %v, status %q", core.saved, v.status.Text)
	}
	core.saveErr = agent.Userf(nil, "slug %q is not valid", "Bad Slug")
	v.schema.SetText("")
	test.Tap(v.save)
	ui.settle()
	if !strings.Contains(v.status.Text, "is not valid") {
		t.Errorf("core's refusal not shown: %q", v.status.Text)
	}
}

func TestEditorShowsAnAgentsTools(t *testing.T) {
	v, _ := agentsScreen(t, &fakeAgents{})
	v.edit(agent.Agent{Slug: "scribe", Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: false}}, Folders: []string{"/a", "/b"}})
	if v.tools[0].use.Checked || !v.tools[1].use.Checked || v.tools[1].ask.Checked || v.folders.Text != "/a\n/b" {
		t.Errorf("editor shows read_file=%v write_file=%v ask=%v folders=%q",
			v.tools[0].use.Checked, v.tools[1].use.Checked, v.tools[1].ask.Checked, v.folders.Text)
	}
	if !v.tools[0].ask.Disabled() {
		t.Error("'ask me first' is editable for a tool that is off")
	}
}

func TestSlugHint(t *testing.T) {
	v, _ := agentsScreen(t, &fakeAgents{})
	test.Type(v.slug, "Has Space")
	if !strings.Contains(v.slugHint.Text, "not valid") {
		t.Errorf("hint = %q", v.slugHint.Text)
	}
}

func TestKillSwitch(t *testing.T) {
	core := &fakeAgents{agents: []agent.Agent{{ID: "1", Slug: "assistant", Name: "Assistant", Enabled: true}}}
	v, ui := agentsScreen(t, core)
	v.refresh()
	row := v.list.CreateItem()
	v.list.UpdateItem(0, row)
	check := row.(*fyne.Container).Objects[1].(*widget.Check)
	if !check.Checked {
		t.Fatal("an enabled agent shows unchecked")
	}
	test.Tap(check)
	ui.settle()
	if on, set := core.enabled["assistant"]; !set || on {
		t.Errorf("kill switch: SetAgentEnabled calls = %v", core.enabled)
	}
}

func question(id string) agent.Question {
	return agent.Question{ID: id, Kind: agent.KindQuestion, Agent: "assistant", Text: "What is your name?",
		AskedAt: time.Now(), ExpiresAt: time.Now().Add(10 * time.Minute), Status: agent.QuestionPending}
}

func TestPopupAnswerReachesTheCore(t *testing.T) {
	core := &fakeQuestions{pending: []agent.Question{question("q1")}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1", Text: "What is your name?"})
	p := a.questions.popups["q1"]
	if p == nil {
		t.Fatal("no popup for the question")
	}
	if len(a.questions.pending) != 1 {
		t.Error("the question is not listed in the window")
	}
	test.Tap(p.send) // empty: refused, and the popup says why
	if len(core.answers) != 0 || !strings.Contains(p.status.Text, "empty") {
		t.Errorf("empty answer: answers %v, status %q", core.answers, p.status.Text)
	}
	test.Type(p.text, "Ada")
	test.Tap(p.send)
	if !cmp.Equal(core.answers, []map[string]any{{"answer": "Ada"}}) {
		t.Fatalf("answers = %v", core.answers)
	}
	// The core confirms: the popup closes and the list empties.
	core.setPending()
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1", Text: string(agent.QuestionAnswered)})
	if _, open := a.questions.popups["q1"]; open || len(a.questions.pending) != 0 {
		t.Error("the popup or the list still shows the answered question")
	}
}

func TestPopupClosesWhenTheClientAnswersFirst(t *testing.T) {
	core := &fakeQuestions{pending: []agent.Question{question("q1")}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"})
	core.setPending()
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1", Text: string(agent.QuestionAnswered)})
	if _, open := a.questions.popups["q1"]; open {
		t.Error("popup still open after the client answered")
	}
	if len(core.answers) != 0 {
		t.Error("the desktop answered too")
	}
}

// TestQuestionOfTheClientTooWaitsBeforeItShows: a question the calling
// client was asked too shows here once it has waited clientGrace: one the
// client answered meanwhile never flashes a popup or a row; one still
// waiting shows then.
func TestQuestionOfTheClientTooWaitsBeforeItShows(t *testing.T) {
	quick, slow := question("q1"), question("q2")
	quick.ClientAsked, slow.ClientAsked = true, true
	core := &fakeQuestions{pending: []agent.Question{quick, slow}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	var timers []func()
	a.questions.after = func(d time.Duration, f func()) {
		if d != clientGrace {
			t.Errorf("the question waits %v, want clientGrace", d)
		}
		timers = append(timers, f)
	}
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"})
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q2"})
	if len(a.questions.popups) != 0 || len(a.questions.pending) != 0 || len(timers) != 2 {
		t.Fatalf("at once: %d popups, %d listed, %d waits; want none shown and two waits", len(a.questions.popups), len(a.questions.pending), len(timers))
	}

	core.setPending(slow) // the client answered q1 within the grace
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1", Text: string(agent.QuestionAnswered)})
	for _, fire := range timers {
		fire()
	}
	if _, shown := a.questions.popups["q1"]; shown {
		t.Error("a popup opened for the question its client answered within the grace")
	}
	if _, shown := a.questions.popups["q2"]; !shown || len(a.questions.pending) != 1 {
		t.Errorf("the question still waiting after the grace: popup %v, %d listed; want its popup and its row", shown, len(a.questions.pending))
	}
}

func TestChoiceAndApprovalPopups(t *testing.T) {
	choice := question("c1")
	choice.Choices = []string{"red", "blue"}
	approval := agent.Question{ID: "a1", Kind: agent.KindApproval, Agent: "scribe", Tool: "write_file",
		Arguments: json.RawMessage(`{"path":"notes.txt"}`), ExpiresAt: time.Now().Add(time.Minute)}
	core := &fakeQuestions{pending: []agent.Question{choice, approval}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "c1"})
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "a1"})
	c, ap := a.questions.popups["c1"], a.questions.popups["a1"]
	if len(c.choices) != 2 || c.text != nil {
		t.Fatalf("choice popup has %d choice buttons", len(c.choices))
	}
	test.Tap(c.choices[1])
	test.Type(ap.comment, "only this once")
	test.Tap(ap.approve)
	want := []map[string]any{{"answer": "blue"}, {"approve": true, "comment": "only this once"}}
	if diff := cmp.Diff(want, core.answers); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	test.Tap(c.decline)
	if !cmp.Equal(core.declined, []string{"c1"}) {
		t.Errorf("declined = %v", core.declined)
	}
}

func TestFormatting(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	cases := []struct{ got, want string }{
		{agentLabel(agent.Agent{Slug: "a", Name: "a"}), "a"},
		{agentLabel(agent.Agent{Slug: "a", Name: "Alpha"}), "Alpha (a)"},
		{pendingLabel(0), "No questions waiting"},
		{pendingLabel(1), "1 question waiting…"},
		{pendingLabel(3), "3 questions waiting…"},
		{pauseLabel(false), "Pause serving"},
		{pauseLabel(true), "Resume serving"},
		{questionTitle(agent.Question{Kind: agent.KindApproval, Agent: "s", Tool: "write_file"}), "s asks to run write_file"},
		{expiresIn(agent.Question{ExpiresAt: now.Add(90 * time.Second)}, now), "1:30 left"},
		{expiresIn(agent.Question{ExpiresAt: now.Add(-time.Second)}, now), "Time is up"},
		{schemaProblem(""), ""},
		{slugProblem(""), ""},
		{slugProblem("ok-slug_1"), ""},
		{closedNote(agent.Event{By: agent.ByClient, Agent: "a", Text: "answered"}), "The client answered a's question first."},
		{closedNote(agent.Event{Agent: "a", Text: "expired"}), "Nobody answered a's question in time."},
		{closedNote(agent.Event{By: agent.ByDesktop, Agent: "a", Text: "answered"}), ""},
		{schemaProblem(`{"type":"object"}`), ""},
		{schemaProblem(`"string"`), `a response schema is a JSON object, like {"type": "object", …}`},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestTrayIconShowsTheState(t *testing.T) {
	o := Options{Icon: assetIcon("app"), TrayIcon: assetIcon("serving"), PausedIcon: assetIcon("paused"), QuestionIcon: assetIcon("question")}
	for _, c := range []struct {
		paused  bool
		waiting int
		want    string
	}{{false, 0, "serving"}, {true, 0, "paused"}, {false, 2, "question"}, {true, 1, "question"}} {
		if got := trayIcon(o, c.paused, c.waiting).Name(); got != c.want {
			t.Errorf("paused=%v waiting=%d: icon %s, want %s", c.paused, c.waiting, got, c.want)
		}
	}
}

func assetIcon(name string) fyne.Resource { return fyne.NewStaticResource(name, []byte(name)) }

func TestConversationsFollowTheCore(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	convs := &fakeConversations{
		conversations: []agent.ConversationSummary{
			{Conversation: agent.Conversation{ID: "c1", AgentID: "a1", Principal: agent.LocalPrincipal, Title: "name game", UpdatedAt: at}, LastStatus: agent.TurnCompleted},
			{Conversation: agent.Conversation{ID: "c2", AgentID: "a2", Title: "notes", UpdatedAt: at}, LastStatus: agent.TurnRunning},
		},
		messages: map[string][]agent.Message{"c1": {
			{Role: agent.RoleUser, Content: "My name is Ada.", TurnID: "t1"},
			{Role: agent.RoleAssistant, Content: "Hello Ada.", TurnID: "t1"},
		}},
		turns: map[string][]agent.Turn{"c1": {{ID: "t1", Status: agent.TurnCompleted, Model: "llama3.2",
			StartedAt: at, EndedAt: at.Add(1200 * time.Millisecond), PromptTokens: 42, OutputTokens: 7}}},
	}
	agents := &fakeAgents{agents: []agent.Agent{{ID: "a1", Slug: "assistant"}, {ID: "a2", Slug: "scribe"}}}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeAgents: agents, fakeConversations: convs}).asCore())
	a.refresh()
	ui.settle()
	v := a.conversations
	if len(v.shown) != 2 {
		t.Fatalf("listed %d conversations", len(v.shown))
	}
	test.Type(v.search, "scribe")
	if len(v.shown) != 1 || v.shown[0].ID != "c2" {
		t.Errorf("search by agent: %+v", v.shown)
	}
	v.search.SetText("")
	v.open("c1")
	ui.settle()
	want := "You: My name is Ada.\nassistant: Hello Ada.\n— Done in 1.2s on llama3.2 · read 42 tokens, wrote 7"
	if got := v.text(); got != want {
		t.Errorf("transcript = %q, want %q", got, want)
	}
	convs.setLive("c1", agent.LiveTurn{TurnID: "t2", Agent: "assistant", Writing: "Writing", Chunks: 2})
	a.handle(agent.Event{Kind: agent.EventDelta, Conversation: "c1", Text: "Writing"})
	a.handle(agent.Event{Kind: agent.EventDelta, Conversation: "c2", Text: "elsewhere"})
	ui.settle()
	if v.writing.Text != "Writing" || !v.words.Visible() || v.liveNote.Text != "Running · writing… ≈2 tokens so far" {
		t.Errorf("live text = %q (%q)", v.writing.Text, v.liveNote.Text)
	}
	now := at.Add(time.Hour)
	if l := conversationLabel(convs.conversations[1], "scribe", "cursor", false, now); l.Title != "notes" || l.Meta != "scribe · cursor" || l.State != "running" || l.Failed {
		t.Errorf("row = %+v", l)
	}
	if l := conversationLabel(convs.conversations[0], "assistant", "cursor", true, now); l.State != "needs an answer" || !l.Waiting {
		t.Errorf("row = %+v", l)
	}
	clients := []agent.Client{{ID: "c1", Name: "cursor"}}
	for principal, want := range map[string]string{"c1": "cursor", agent.LocalPrincipal: "this computer", "gone": "a revoked client"} {
		if got := clientName(principal, clients); got != want {
			t.Errorf("clientName(%q) = %q", principal, got)
		}
	}
}

func TestSettingsTokensAndServer(t *testing.T) {
	core := &fakeSettings{settings: map[string]string{"server.title": "My agents"}}
	v, ui := settingsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.entries["server.title"].Text != "My agents" {
		t.Errorf("saved setting not shown: %q", v.entries["server.title"].Text)
	}
	test.Tap(widget.NewButton("", v.create)) // an empty name is refused, and said so
	ui.settle()
	if !strings.Contains(v.tokenStatus.Text, "Type the client's name") {
		t.Errorf("status = %q", v.tokenStatus.Text)
	}
	test.Type(v.newName, "cursor")
	v.newName.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Enter creates the token
	ui.settle()
	if len(v.clients) != 1 || v.clients[0].Name != "cursor" || v.newName.Text != "" || !strings.Contains(v.tokenStatus.Text, "Created") {
		t.Fatalf("clients = %+v, status %q", v.clients, v.tokenStatus.Text)
	}
	v.rotate("cursor")
	ui.settle()
	if !cmp.Equal(core.rotated, []string{"cursor"}) || len(core.revoked) != 0 || !strings.Contains(v.tokenStatus.Text, "Rotated") {
		t.Errorf("rotate: rotated %v, revoked %v, status %q", core.rotated, core.revoked, v.tokenStatus.Text)
	}
	v.revoke("cursor")
	ui.settle()
	if !cmp.Equal(core.revoked, []string{"cursor"}) {
		t.Errorf("revoked = %v", core.revoked)
	}
	v.entries["server.allowed_hosts"].SetText("*.dev.example")
	v.entries["server.addr"].SetText("0.0.0.0:7345")
	v.insecure.SetChecked(true)
	v.save()
	ui.settle()
	if !strings.Contains(v.notes["server.addr"].Text, "requires tokens") || !strings.Contains(v.advancedStatus.Text, "Not saved") || core.settings["server.addr"] != "" {
		t.Errorf("a non-loopback address without tokens was saved: %q, %q, %v", v.notes["server.addr"].Text, v.advancedStatus.Text, core.settings)
	}
	v.insecure.SetChecked(false)
	if strings.Contains(v.notes["server.addr"].Text, "requires tokens") {
		t.Errorf("the address's note stayed once fixed: %q", v.notes["server.addr"].Text)
	}
	v.save()
	ui.settle()
	if core.settings["server.allowed_hosts"] != "*.dev.example" || core.settings["server.title"] != "My agents" ||
		core.settings["server.addr"] != "0.0.0.0:7345" || core.settings["server.insecure_no_auth"] != "false" {
		t.Errorf("settings = %v", core.settings)
	}
	if !strings.Contains(v.advancedStatus.Text, "next start") {
		t.Errorf("saved: %q", v.advancedStatus.Text)
	}
	if got := clientLabel(agent.Client{Name: "c", CreatedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.Local)}, -1, time.Now()); got != "created Jan 2 2026 · never used" {
		t.Errorf("label = %q", got)
	}
}

func TestTryIt(t *testing.T) {
	core := &fakeAgents{runGate: make(chan struct{})}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeAgents: core}).asCore())
	v := a.agents
	test.Tap(v.tryButton)
	if v.tryOutput.Text != "Save the agent first." {
		t.Errorf("unsaved: %q", v.tryOutput.Text)
	}
	v.edit(agent.Agent{ID: "a1", Slug: "helper"})
	test.Type(v.try, "hello")
	test.Tap(v.tryButton)
	a.handle(agent.Event{Kind: agent.EventDelta, Turn: v.tryTurn, Text: "ech"})
	a.handle(agent.Event{Kind: agent.EventDelta, Turn: "another turn", Text: "!!"})
	if v.tryOutput.Text != "You: hello\nhelper: ech" || v.try.Text != "" {
		t.Errorf("streamed = %q, input left %q", v.tryOutput.Text, v.try.Text)
	}
	close(core.runGate)
	ui.settle()
	if v.tryOutput.Text != "You: hello\nhelper: echo: hello" {
		t.Errorf("try output = %q", v.tryOutput.Text)
	}
	// The transcript is the agent's: another has its own, and coming back
	// shows it again.
	v.edit(agent.Agent{ID: "a2", Slug: "other"})
	if v.tryOutput.Text != "" {
		t.Errorf("another agent shows %q", v.tryOutput.Text)
	}
	v.edit(agent.Agent{ID: "a1", Slug: "helper"})
	if v.tryOutput.Text != "You: hello\nhelper: echo: hello" {
		t.Errorf("back to helper: %q", v.tryOutput.Text)
	}
	test.Type(v.try, "again")
	v.try.OnSubmitted(v.try.Text) // Enter sends
	ui.settle()
	if !strings.HasSuffix(v.tryOutput.Text, "\n\nYou: again\nhelper: echo: again") {
		t.Errorf("after Enter: %q", v.tryOutput.Text)
	}
	core.mu.Lock()
	defer core.mu.Unlock()
	if len(core.runs) != 2 || core.runs[0].Agent != "helper" || core.runs[0].Principal != agent.LocalPrincipal || core.runs[0].TurnID == "" {
		t.Errorf("runs = %+v", core.runs)
	}
}

func TestPullModel(t *testing.T) {
	providers := &fakeProviders{models: map[string][]string{"ollama": {"llama3.2"}}}
	v, ui := agentsScreen(t, &fakeAgents{fakeProviders: providers})
	ui.settle()
	v.model.SetText("qwen3:8b")
	test.Tap(v.pullButton)
	if v.pullBar.Hidden || v.cancelPull.Hidden {
		t.Error("no progress shown while pulling")
	}
	providers.mu.Lock()
	providers.models["ollama"] = []string{"llama3.2", "qwen3:8b"}
	providers.mu.Unlock()
	ui.settle()
	if v.status.Text != "Pulled qwen3:8b." || v.modelHint.Text != "" { // the model pulled is the one picked
		t.Errorf("after the pull: status %q, models %q", v.status.Text, v.modelHint.Text)
	}
	if !v.pullBar.Hidden || v.pullButton.Hidden {
		t.Error("progress still shown after the pull")
	}
	v.model.SetText("missing-model")
	test.Tap(v.pullButton)
	ui.settle()
	if !strings.Contains(v.status.Text, "could not pull") {
		t.Errorf("failed pull: %q", v.status.Text)
	}
}

// TestLaunchAtLogin: the login box shows whether Deskhand starts at login
// and switches it; the OS's side is ui/desktop/platform's (tested there,
// also against a temporary config folder).
func TestLaunchAtLogin(t *testing.T) {
	v, ui := settingsScreen(t, &fakeSettings{})
	login := &fakeLoginItem{}
	v.launchesAtLogin, v.setLaunchAtLogin = login.enabled, login.set
	v.refresh()
	ui.settle()
	if v.login.Checked {
		t.Fatal("on before being turned on")
	}
	test.Tap(v.login)
	ui.settle()
	if !login.on || len(login.sets) != 1 {
		t.Fatalf("checking the box: on %v, calls %v", login.on, login.sets)
	}
	v.refresh()
	ui.settle()
	if !v.login.Checked || len(login.sets) != 1 {
		t.Errorf("after a refresh: checked %v, calls %v (showing the state must not set it)", v.login.Checked, login.sets)
	}
	test.Tap(v.login)
	ui.settle()
	if login.on || v.login.Checked {
		t.Errorf("off: on %v, checked %v", login.on, v.login.Checked)
	}
	login.fail = agent.Userf(nil, "cannot write the autostart entry")
	test.Tap(v.login)
	ui.settle()
	if !strings.Contains(v.loginStatus.Text, "cannot write the autostart entry") {
		t.Errorf("a failure is not shown next to the box: %q", v.loginStatus.Text)
	}
	v.loginStatus.SetText("")
	v.refresh()
	ui.settle()
	if !strings.Contains(v.loginStatus.Text, "cannot write the autostart entry") {
		t.Errorf("a failure to read is not shown next to the box: %q", v.loginStatus.Text)
	}
}

func TestAddrProblem(t *testing.T) {
	for _, c := range []struct {
		addr     string
		insecure bool
		want     string
	}{
		{"", true, ""},
		{"127.0.0.1:7345", true, ""},
		{"[::1]:7345", true, ""},
		{"localhost:1", true, ""},
		{"0.0.0.0:7345", false, ""},
		{"0.0.0.0:7345", true, "requires tokens"},
		{"7345", false, "not HOST:PORT"},
	} {
		if got := addrProblem(c.addr, c.insecure); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("addrProblem(%q, %v) = %q", c.addr, c.insecure, got)
		}
	}
}

func TestDeleteAgent(t *testing.T) {
	core := &fakeAgents{agents: []agent.Agent{{ID: "1", Slug: "helper", Name: "Helper"}}}
	v, ui := agentsScreen(t, core)
	v.refresh()
	v.edit(agent.Agent{})
	v.confirmDelete()
	if !strings.Contains(v.status.Text, "not saved") {
		t.Errorf("deleting an unsaved agent: %q", v.status.Text)
	}
	v.edit(core.agents[0])
	v.deleteAgent("helper")
	ui.settle()
	if len(core.agents) != 0 || v.editing.ID != "" || !strings.Contains(v.status.Text, "Deleted helper") {
		t.Errorf("after delete: agents %v, editing %+v, status %q", core.agents, v.editing, v.status.Text)
	}
	v.deleteAgent("helper")
	ui.settle()
	if !strings.Contains(v.status.Text, "Not deleted") {
		t.Errorf("deleting twice: %q", v.status.Text)
	}
}

func TestWhoIsAsked(t *testing.T) {
	for _, tc := range []struct {
		routing          agent.Routing
		clientMayApprove bool
		want             string
	}{
		{agent.RouteClient, false, "Approvals of tool calls come to you here only."},
		{"", false, "Approvals of tool calls come to you here only."},
		{agent.RouteClient, true, "Questions and approvals of tool calls go to the person using the calling client"},
		{agent.RouteDesktop, true, "Questions and approvals of tool calls come to you here, on this computer."},
		{agent.RouteDecline, false, "Nobody is asked"},
	} {
		if got := whoIsAsked(tc.routing, tc.clientMayApprove); !strings.Contains(got, tc.want) {
			t.Errorf("whoIsAsked(%q, %v) = %q, want it to contain %q", tc.routing, tc.clientMayApprove, got, tc.want)
		}
	}
}

// TestSavingLeavesTheUIFree: while the core is still writing the agent,
// the editor says so and the window keeps working; then the result lands.
func TestSavingLeavesTheUIFree(t *testing.T) {
	core := &fakeAgents{saveGate: make(chan struct{}), saving: make(chan context.Context, 1)}
	v, ui := agentsScreen(t, core)
	test.Type(v.name, "Researcher") // the slug follows
	tapped := make(chan struct{})
	go func() { // this goroutine is fyne's until the tap returns
		defer close(tapped)
		test.Tap(v.save)
	}()
	select {
	case <-tapped:
	case <-time.After(10 * time.Second): // a guard, not a synchronisation
		close(core.saveGate)
		t.Fatal("tapping Save waited for the core: the write runs on fyne's goroutine")
	}
	ctx := <-core.saving // Save is running, and held
	if ctx.Done() == nil {
		t.Error("SaveAgent got a context that never ends")
	}
	if v.status.Text != "Saving Researcher (researcher)…" || !v.save.Disabled() {
		t.Errorf("while saving: status %q, Save enabled %v", v.status.Text, !v.save.Disabled())
	}
	test.Type(v.description, "Finds sources") // the editor still answers
	test.Tap(v.tryButton)
	if v.tryOutput.Text != "Save the agent first." || v.description.Text != "Finds sources" {
		t.Errorf("the window did not answer while saving: %q, %q", v.tryOutput.Text, v.description.Text)
	}
	close(core.saveGate)
	ui.settle()
	// Saved, with no model: it says so. The description typed meanwhile
	// is still to save.
	if v.status.Text != "Saved Researcher (researcher). "+noModelWarning(editorFields{Backend: agent.BackendProvider}) ||
		v.save.Disabled() || v.editing.ID != "new-id" || len(v.agents) != 1 || v.heading.Text != "Researcher (researcher) — unsaved changes" {
		t.Errorf("after saving: status %q, Save disabled %v, editing %+v, listed %d, heading %q", v.status.Text, v.save.Disabled(), v.editing, len(v.agents), v.heading.Text)
	}
}

// TestCloseStopsTheCoresWork: closing the App cancels the context of a
// call still running, waits for it, and shows nothing after.
func TestCloseStopsTheCoresWork(t *testing.T) {
	core := &fakeAgents{saveGate: make(chan struct{}), saving: make(chan context.Context, 1)}
	v, ui := agentsScreen(t, core)
	test.Type(v.slug, "researcher")
	test.Tap(v.save)
	ctx := <-core.saving
	v.app.Close() // returns once Save has
	if ctx.Err() == nil {
		t.Error("SaveAgent's context outlived the App")
	}
	ui.settle()
	if !strings.HasPrefix(v.status.Text, "Saving") || len(core.saved) != 0 {
		t.Errorf("after Close: status %q, saved %v", v.status.Text, core.saved)
	}
	ran := false
	v.app.background(func(context.Context) func() { ran = true; return nil })
	ui.settle()
	if ran {
		t.Error("a closed App started work")
	}
}

// TestFollowEndsWithTheApp: the event pump stops when the App closes.
func TestFollowEndsWithTheApp(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	a.Follow(t.Context()) // settle would wait for the pump: it runs until Close
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		a.Close()
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // a guard, not a synchronisation
		t.Fatal("Close waited for ever: the event pump outlived the App")
	}
}

// TestWindowFitsASmallScreen: the window fits a 1024×768 screen at
// FYNE_SCALE=1.5, i.e. 680×480 logical pixels less the window's frame:
// neither a tab nor the bars around the tabs may need more (a form label
// does not wrap: a long one widens the whole window, and a dialog centred
// on it lands off screen).
func TestWindowFitsASmallScreen(t *testing.T) {
	const maxW, maxH = 680, 480
	opts := testOptions()
	opts.Notice = "First start found no model server on this computer."
	a, ui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{pause: &fakePause{on: true}}).asCore(), opts))
	a.refresh()
	ui.settle()
	if !a.status.banner.Visible() || !a.onboarding.box.Visible() {
		t.Fatal("the banner and the first-run panel are measured while shown")
	}
	fits := func(s fyne.Size) bool { return s.Width <= maxW && s.Height <= maxH }
	for _, tab := range a.tabs.Items {
		if s := tab.Content.MinSize(); !fits(s) {
			t.Errorf("the %s tab needs %.0f×%.0f, more than %d×%d", tab.Text, s.Width, s.Height, maxW, maxH)
		}
	}
	bars := map[string]fyne.CanvasObject{"status bar": a.status.bar, "paused banner": a.status.banner, "first-run panel": a.onboarding.box}
	for name, bar := range bars {
		if w := bar.MinSize().Width; w > maxW {
			t.Errorf("the %s needs %.0f pixels of width, more than %d", name, w, maxW)
		}
	}
	// Laid out at that width (their text wraps), the bars leave the tabs
	// at least 280 pixels of height.
	a.win.Resize(fyne.NewSize(maxW, maxH))
	a.relayout() // with the wrapped text's height
	var barsHeight float32
	for _, bar := range bars {
		barsHeight += bar.Size().Height
	}
	if barsHeight > maxH-280 {
		t.Errorf("the bars around the tabs take %.0f pixels of height", barsHeight)
	}
	t.Logf("the bars take %.0f pixels of height; the status bar needs %.0f of width", barsHeight, a.status.bar.MinSize().Width)
}

// TestFirstRunNotice: when first start found no model, the first-run
// panel shows at once above the tabs with main's notice and walks
// through the steps: the address of a server typed in it is set up,
// "Pick a model…" saves the one clicked, "Try it" puts the keyboard in
// the editor's Try it, and the panel is done for good; until then it
// comes back at each start, on the step the person stands at.
func TestFirstRunNotice(t *testing.T) {
	opts := testOptions()
	opts.Notice = "First start found no model server on this computer."
	providers := &fakeProviders{providers: []agent.ProviderStatus{{Provider: agent.Provider{Name: "ollama", Kind: agent.ProviderOllama}}},
		found: map[string]agent.Provider{"127.0.0.1:11439": {Name: "ollama", Kind: agent.ProviderOllama, BaseURL: "http://127.0.0.1:11439"}}}
	assistant := agent.Agent{ID: "1", Slug: "assistant", Enabled: true, Provider: "ollama"}
	core := newFakeCore(fakeCore{fakeAgents: &fakeAgents{agents: []agent.Agent{assistant}}, fakeProviders: providers})
	fy := test.NewTempApp(t)
	a, ui := withTestUI(t, New(fy, core.asCore(), opts))
	p := a.onboarding
	if !p.box.Visible() || p.text.Text != opts.Notice {
		t.Fatalf("before asking the servers: panel shown %v, text %q", p.box.Visible(), p.text.Text)
	}
	a.refresh()
	ui.settle()
	if !p.box.Visible() || !strings.HasPrefix(p.text.Text, "No model server answered") || !strings.HasSuffix(p.title.Text, "step 1 of 3") || p.addressRow.Hidden {
		t.Fatalf("no server: shown %v, title %q, text %q", p.box.Visible(), p.title.Text, p.text.Text)
	}
	opened := recordURLs(a)
	test.Tap(p.getOllama)
	if !cmp.Equal(*opened, []string{"https://ollama.com/download"}) {
		t.Errorf("Get Ollama opened %v", *opened)
	}
	test.Tap(p.providers)
	inner := a.settingsTabs
	if a.tabs.SelectedIndex() != tabSettings || inner.Selected().Text != "Models" {
		t.Errorf("Add a provider opened tab %d, %q", a.tabs.SelectedIndex(), inner.Selected().Text)
	}
	// The person types the address of their Ollama, on a port of its own.
	test.Type(p.address, "127.0.0.1:9")
	p.address.OnSubmitted(p.address.Text)
	ui.settle()
	if p.addressNote.Text != "✖ nothing answered at 127.0.0.1:9" || p.addressNote.Importance != widget.DangerImportance {
		t.Errorf("a wrong address: %q", p.addressNote.Text)
	}
	p.address.SetText("127.0.0.1:11439")
	providers.mu.Lock()
	providers.models = map[string][]string{"ollama": {"qwen3", "llama3.2"}}
	providers.mu.Unlock()
	test.Tap(p.use)
	ui.settle()
	if !p.box.Visible() || p.title.Text != "Get your first agent working, step 2 of 3: ✔ Ollama answered, with 2 models." ||
		!strings.HasPrefix(p.text.Text, "Pick a model for assistant") || p.modelButtons.Hidden || !p.addressRow.Hidden {
		t.Errorf("server found: shown %v, title %q, text %q", p.box.Visible(), p.title.Text, p.text.Text)
	}
	// Pick a model…: one click on the model saves it.
	test.Tap(p.pick)
	ui.settle()
	top := a.win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("Pick a model opened no picker")
	}
	test.Tap(findButton(t, top, "llama3.2  ·  Ollama"))
	ui.settle()
	core.fakeAgents.mu.Lock()
	saved := core.fakeAgents.saved
	core.fakeAgents.agents = saved
	core.fakeAgents.mu.Unlock()
	if len(saved) != 1 || saved[0].Slug != "assistant" || saved[0].Model != "llama3.2" || saved[0].Provider != "ollama" {
		t.Fatalf("picked llama3.2: saved %+v", saved)
	}
	a.handle(agent.Event{Kind: agent.EventAgentsChanged})
	ui.settle()
	if !p.box.Visible() || !strings.HasSuffix(p.title.Text, "step 3 of 3: ✔ assistant runs on llama3.2.") || p.tryButtons.Hidden {
		t.Errorf("ready: shown %v, title %q", p.box.Visible(), p.title.Text)
	}

	// A restart before trying it: the panel is back, at step 3.
	b, bui := withTestUI(t, New(fy, core.asCore(), testOptions()))
	b.refresh()
	bui.settle()
	if !b.onboarding.box.Visible() || !strings.Contains(b.onboarding.title.Text, "step 3 of 3") {
		t.Errorf("after a restart: shown %v, title %q", b.onboarding.box.Visible(), b.onboarding.title.Text)
	}

	a.tabs.SelectIndex(tabSettings)
	test.Tap(p.tryIt)
	if a.tabs.SelectedIndex() != tabAgents || a.win.Canvas().Focused() != a.agents.try {
		t.Errorf("Try it: tab %d, focus on %v", a.tabs.SelectedIndex(), a.win.Canvas().Focused())
	}
	a.handle(agent.Event{Kind: agent.EventAgentsChanged})
	ui.settle()
	if p.box.Visible() {
		t.Error("the first-run panel stayed after Try it")
	}
	c, cui := withTestUI(t, New(fy, core.asCore(), opts))
	c.refresh()
	cui.settle()
	if c.onboarding.box.Visible() {
		t.Error("the panel came back after a restart, once tried")
	}

	// Hide dismisses it for good.
	d, dui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{}).asCore(), opts))
	test.Tap(d.onboarding.hide)
	d.refresh()
	dui.settle()
	if d.onboarding.box.Visible() || !d.fy.Preferences().Bool(onboardedKey) {
		t.Error("the panel came back after Hide")
	}
	// Where no browser opens, Get Ollama shows the address to copy.
	d.onboarding.openURL = func(*url.URL) error { return errors.New("no browser") }
	d.onboarding.openOllamaDownload()
	if top := d.win.Canvas().Overlays().Top(); top == nil || findButton(t, top, "Copy") == nil {
		t.Error("Get Ollama with no browser showed nothing")
	}
	// Without a notice, it waits for the servers' answer.
	e, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	if e.onboarding.box.Visible() {
		t.Error("a first-run panel before knowing")
	}
}

// TestEditorEssentialsOnASmallScreen: with the window on a 1024×768
// screen, and on the walk's 1280×800 at 1.5× (853×533 logical pixels),
// the first-run panel and the status bar shown, the editor shows the
// name, description, model and instructions without scrolling.
func TestEditorEssentialsOnASmallScreen(t *testing.T) {
	for _, size := range []fyne.Size{{Width: 1024, Height: 740}, {Width: 853, Height: 510}} { // less the window's title bar
		a, ui := newTestApp(t, servingCore().asCore())
		a.refresh()
		ui.settle()
		a.win.Resize(size)
		a.relayout()
		if !a.onboarding.box.Visible() {
			t.Fatal("measured with the first-run panel shown")
		}
		v := a.agents
		d := fyne.CurrentApp().Driver()
		formTop := d.AbsolutePositionForObject(v.form).Y
		for name, o := range map[string]fyne.CanvasObject{"name": v.name, "description": v.description, "model": v.model, "instructions": v.prompt} {
			top := d.AbsolutePositionForObject(o).Y - formTop
			if bottom := top + o.Size().Height; top < 0 || bottom > v.form.Size().Height || !o.Visible() {
				t.Errorf("at %v: the %s is at %.0f–%.0f in a form %.0f high", size, name, top, bottom, v.form.Size().Height)
			}
		}
	}
}
