package desktop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

func TestRowOf(t *testing.T) {
	shown := []agent.ConversationSummary{{Conversation: agent.Conversation{ID: "a"}}, {Conversation: agent.Conversation{ID: "b"}}}
	for _, c := range []struct {
		id   string
		want int
	}{{"a", 0}, {"b", 1}, {"gone", -1}, {"", -1}} {
		if got := rowOf(shown, c.id); got != c.want {
			t.Errorf("rowOf(%q) = %d, want %d", c.id, got, c.want)
		}
	}
	if got := rowOf(nil, "a"); got != -1 {
		t.Errorf("rowOf in an empty list = %d", got)
	}
}

func TestCallLine(t *testing.T) {
	for _, c := range []struct {
		args string
		want string
	}{
		{`{"path":"notes.txt"}`, "read_file · path: notes.txt"},
		{`{"path":"a.txt","content":"line one\nline two"}`, "read_file · content: line one, path: a.txt"},
		{`{"n":3,"deep":true}`, "read_file · deep: true, n: 3"},
		{`{}`, "read_file"},
		{`not json`, "read_file"},
		{`{"path":"` + strings.Repeat("x", 100) + `"}`, "read_file · path: " + strings.Repeat("x", callLineMax-utf8.RuneCountInString("read_file · path: ")-1) + "…"},
	} {
		if got := callLine(agent.ToolCall{Name: "read_file", Arguments: json.RawMessage(c.args)}); got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
}

func TestTranscriptItems(t *testing.T) {
	sp := speakersOf("id-cursor", []agent.Client{{ID: "id-cursor", Name: "cursor"}}, agent.Agent{Slug: "scribe", Name: "Scribe"}, true)
	if sp.User != "cursor" || sp.Agent != "Scribe" || sp.Client != "cursor" {
		t.Errorf("speakers = %+v", sp)
	}
	if local := speakersOf(agent.LocalPrincipal, nil, agent.Agent{Slug: "scribe"}, true); local.User != "You" || local.Agent != "scribe" {
		t.Errorf("local speakers = %+v", local)
	}
	msgs := []agent.Message{
		{Role: agent.RoleUser, Content: "tidy my notes"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "1", Name: "ask_user", Arguments: json.RawMessage(`{"question":"Which folder?","choices":["a","b"]}`)},
			{ID: "2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a/notes.txt"}`)},
			{ID: "3", Name: "write_file", Arguments: json.RawMessage(`{"path":"a/notes.txt"}`)},
		}},
		{Role: agent.RoleTool, ToolCallID: "1", ToolName: "ask_user", Content: "a"},
		{Role: agent.RoleTool, ToolCallID: "2", ToolName: "read_file", Content: "error: no such file"},
		{Role: agent.RoleTool, ToolCallID: "3", ToolName: "write_file", Content: "The person denied this call; it was not run."},
		{Role: agent.RoleAssistant, Content: "I could not."},
	}
	qs := []agent.Question{
		{Kind: agent.KindApproval, Tool: "write_file", Status: agent.QuestionAnswered, Answer: &agent.Answer{Approve: false, Comment: "not now", By: agent.ByDesktop}},
		{Kind: agent.KindQuestion, Text: "Which folder?", Status: agent.QuestionAnswered, Answer: &agent.Answer{Text: "a", By: agent.ByClient}},
	}
	want := []transcriptItem{
		{Kind: itemMessage, Who: "cursor", Text: "tidy my notes"},
		{Kind: itemQuestion, Who: "Scribe", Text: "Which folder? (a / b)", Result: "answered by cursor: a"},
		{Kind: itemCall, Text: "read_file · path: a/notes.txt", Result: "error: no such file", Failed: true, Call: "path: a/notes.txt"},
		{Kind: itemCall, Text: "write_file (denied by you, in Deskhand: “not now”) · path: a/notes.txt", Result: "The person denied this call; it was not run.", Call: "path: a/notes.txt"},
		{Kind: itemMessage, Who: "Scribe", Text: "I could not."},
	}
	got := transcriptItems(msgs, qs, sp)
	if len(got) != len(want) {
		t.Fatalf("items = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d = %+v,\n want %+v", i, got[i], want[i])
		}
	}
	// Without the stored question, the answer still shows; a call still
	// running says so.
	noQs := transcriptItems(msgs[:3], nil, sp)
	if noQs[1].Result != "The answer: a" || noQs[2].Result != "" {
		t.Errorf("items = %+v", noQs)
	}
	for _, c := range []struct {
		q    agent.Question
		want string
		bad  bool
	}{
		{agent.Question{Status: agent.QuestionPending}, "waiting for an answer", false},
		{agent.Question{Status: agent.QuestionExpired}, "nobody answered in time", true},
		{agent.Question{Status: agent.QuestionCancelled}, "withdrawn: the turn ended first", true},
		{agent.Question{Status: agent.QuestionDeclined, Answer: &agent.Answer{Declined: true, By: agent.ByClient}}, "declined by cursor", true},
		{agent.Question{Kind: agent.KindApproval, Status: agent.QuestionAnswered, Answer: &agent.Answer{Approve: true, By: agent.ByDesktop}}, "approved by you, in Deskhand", false},
	} {
		if got, bad := answerNote(c.q, sp); got != c.want || bad != c.bad {
			t.Errorf("%+v: %q %v, want %q %v", c.q, got, bad, c.want, c.bad)
		}
	}
}

func TestLiveSummary(t *testing.T) {
	call := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "read_file"}}}
	for _, c := range []struct {
		lt   agent.LiveTurn
		want string
	}{
		{agent.LiveTurn{}, "Running · waiting for the model…"},
		{agent.LiveTurn{Chunks: 1}, "Running · writing… ≈1 token so far"},
		{agent.LiveTurn{OutputTokens: 10, Chunks: 5}, "Running · writing… ≈15 tokens so far"},
		{agent.LiveTurn{Messages: []agent.Message{call}, OutputTokens: 4}, "Running · running read_file… ≈4 tokens so far"},
		{agent.LiveTurn{Messages: []agent.Message{call, {Role: agent.RoleTool, ToolCallID: "1"}}}, "Running · waiting for the model…"},
	} {
		if got := liveSummary(c.lt); got != c.want {
			t.Errorf("%+v: %q, want %q", c.lt, got, c.want)
		}
	}
}

func TestConversationLine(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.Local)
	conv := func(status agent.TurnStatus, at time.Time) agent.ConversationSummary {
		return agent.ConversationSummary{Conversation: agent.Conversation{Title: "tidy", UpdatedAt: at}, LastStatus: status}
	}
	for _, c := range []struct {
		c       agent.ConversationSummary
		waiting bool
		state   string
		when    string
		failed  bool
	}{
		{conv("", now), false, "new", "15:00", false},
		{conv(agent.TurnCompleted, now.Add(-time.Hour)), false, "done", "14:00", false},
		{conv(agent.TurnFailed, now.AddDate(0, 0, -3)), false, "failed", "Nov 28", true},
		{conv(agent.TurnCancelled, now.AddDate(-1, 0, 0)), false, "stopped", "Dec 1 2025", true},
		{conv(agent.TurnInterrupted, now), false, "interrupted", "15:00", true},
		{conv(agent.TurnRunning, now), true, "needs an answer", "15:00", false},
	} {
		l := conversationLabel(c.c, "scribe", "cursor", c.waiting, now)
		if l.State != c.state || l.When != c.when || l.Failed != c.failed || l.Meta != "scribe · cursor" || l.Title != "tidy" {
			t.Errorf("%+v: %+v", c.c, l)
		}
	}
}

// conversationsFixture is the whole desktop with two conversations of
// two agents, listed.
func conversationsFixture(t *testing.T, qs *fakeQuestions) (*App, *testUI, *fakeConversations) {
	t.Helper()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	convs := &fakeConversations{
		conversations: []agent.ConversationSummary{
			{Conversation: agent.Conversation{ID: "c1", AgentID: "a1", Principal: agent.LocalPrincipal, Title: "name game", UpdatedAt: at}, LastStatus: agent.TurnCompleted},
			{Conversation: agent.Conversation{ID: "c2", AgentID: "a2", Principal: agent.LocalPrincipal, Title: "notes", UpdatedAt: at}, LastStatus: agent.TurnRunning},
		},
		messages: map[string][]agent.Message{
			"c1": {{Role: agent.RoleUser, Content: "My name is Ada.", TurnID: "t1"}, {Role: agent.RoleAssistant, Content: "Hello Ada.", TurnID: "t1"}},
			"c2": {{Role: agent.RoleUser, Content: "tidy my notes", TurnID: "t2"}},
		},
		turns: map[string][]agent.Turn{
			"c1": {{ID: "t1", Status: agent.TurnCompleted, StartedAt: at, EndedAt: at.Add(time.Second), PromptTokens: 42, OutputTokens: 7}},
			"c2": {{ID: "t2", Status: agent.TurnRunning, StartedAt: at}},
		},
	}
	agents := &fakeAgents{agents: []agent.Agent{{ID: "a1", Slug: "assistant"}, {ID: "a2", Slug: "scribe", Name: "Scribe", Routing: agent.RouteDesktop}}}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeAgents: agents, fakeConversations: convs, fakeQuestions: qs}).asCore())
	a.tabs.SelectIndex(tabConversations) // the list follows events while it can be seen
	a.refresh()
	ui.settle()
	return a, ui, convs
}

// TestSelectionFollowsTheConversation: a call arriving or a search keeps
// the conversation shown highlighted, wherever its row moves; filtered
// out, it is put away until the search is cleared; a click opens, and
// then stays.
func TestSelectionFollowsTheConversation(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	v.list.Select(1) // a click on "notes"
	ui.settle()
	if v.current != "c2" || v.selected != 1 || marked(t, v) != "notes" {
		t.Fatalf("opened %q, row %d, marked %q", v.current, v.selected, marked(t, v))
	}
	convs.addConversation(agent.ConversationSummary{Conversation: agent.Conversation{ID: "c3", AgentID: "a1", Title: "new call"}})
	a.handle(agent.Event{Kind: agent.EventTurnStarted, Conversation: "c3"})
	ui.settle()
	if v.current != "c2" || v.selected != 2 || v.shown[v.selected].ID != "c2" || marked(t, v) != "notes" {
		t.Errorf("after a call: showing %q, row %d highlighted, marked %q", v.current, v.selected, marked(t, v))
	}
	test.Type(v.search, "name")
	ui.settle()
	if v.current != "" || v.selected != -1 || marked(t, v) != "" || v.header.Text != "" {
		t.Errorf("filtered out: showing %q, row %d highlighted, marked %q, header %q", v.current, v.selected, marked(t, v), v.header.Text)
	}
	if texts, _ := conversationTexts(v.history); !strings.Contains(texts, "not among those found") {
		t.Errorf("the pane says %q", texts)
	}
	v.search.SetText("")
	ui.settle()
	if v.current != "c2" || marked(t, v) != "notes" || !strings.Contains(v.text(), "tidy my notes") {
		t.Errorf("search cleared: showing %q, marked %q: %q", v.current, marked(t, v), v.text())
	}
	test.Type(v.search, "name")
	v.list.Select(0) // the only row: name game
	ui.settle()
	if v.current != "c1" || !strings.Contains(v.text(), "Hello Ada.") {
		t.Errorf("a click opened %q: %q", v.current, v.text())
	}
	v.search.SetText("")
	ui.settle()
	if v.current != "c1" || v.selected < 0 || v.shown[v.selected].ID != "c1" || marked(t, v) != "name game" {
		t.Errorf("search cleared after another was opened: showing %q, row %d highlighted, %q marked", v.current, v.selected, marked(t, v))
	}
}

// TestAReadMovesTheMarkNotTheList: a read that moves the open
// conversation's row marks the row where it went and leaves the list
// scrolled where the person left it; rows that stay as many are redrawn
// in place, not by List.Refresh (which builds a row to measure them and
// frees every texture of the list).
func TestAReadMovesTheMarkNotTheList(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	for i := range 40 {
		convs.addConversation(agent.ConversationSummary{Conversation: agent.Conversation{ID: fmt.Sprint("m", i), AgentID: "a1", Title: fmt.Sprint("more ", i)}})
	}
	v := a.conversations
	v.refresh()
	ui.settle()
	v.list.Select(0) // a click on "more 39", the top row
	ui.settle()
	v.list.ScrollToBottom() // to read older ones
	bottom := v.list.GetScrollOffset()
	if bottom == 0 {
		t.Fatal("the list does not scroll: the test needs more rows")
	}
	built := 0
	create := v.list.CreateItem
	v.list.CreateItem = func() fyne.CanvasObject { built++; return create() }

	convs.touch("c1") // a call to the bottom row's conversation: every row moves
	a.handle(agent.Event{Kind: agent.EventTurnStarted, Conversation: "c1"})
	ui.settle()
	if v.selected != 1 || v.shown[1].ID != "m39" {
		t.Errorf("row %d is the open one's, want 1", v.selected)
	}
	if got := v.list.GetScrollOffset(); got != bottom {
		t.Errorf("the list scrolled from %.0f to %.0f", bottom, got)
	}
	if built != 0 {
		t.Errorf("the list was refreshed whole (%d rows built)", built)
	}
	v.list.ScrollToTop()
	if got := marked(t, v); got != "more 39" {
		t.Errorf("marked %q, want the open conversation", got)
	}
	if got := rowTitles(t, v)[:2]; !slices.Equal(got, []string{"name game", "more 39"}) {
		t.Errorf("the top rows show %q", got)
	}
}

// TestTranscriptFollowsItsEnd: text that grows past the view scrolls it
// to the end, unless the person has scrolled back to read.
func TestTranscriptFollowsItsEnd(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "a"})
	v.open("c2")
	ui.settle()
	long := strings.Repeat("a line of text\n", 100)
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: long, Chunks: 2})
	v.syncLive(false)
	end := v.transcript.MinSize().Height - v.scroll.Size().Height
	if end <= 0 {
		t.Fatalf("the transcript fits its view (%.0f over): the test needs more text", end)
	}
	if v.scroll.Offset.Y != end {
		t.Errorf("scrolled to %.0f, want its end %.0f", v.scroll.Offset.Y, end)
	}
	v.scroll.ScrollToTop() // the person reads back
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: long + long, Chunks: 3})
	v.syncLive(false)
	if v.scroll.Offset.Y != 0 {
		t.Errorf("scrolled back, the view moved to %.0f", v.scroll.Offset.Y)
	}
}

// TestOpenMarkTakesTheThemesColour: the open row's mark is drawn in the
// selection colour of the theme in force, and follows a theme change.
func TestOpenMarkTakesTheThemesColour(t *testing.T) {
	app := test.NewTempApp(t)
	m := newOpenMark()
	m.set(true)
	first, second := test.Theme(), test.NewTheme()
	o := container.NewThemeOverride(m, first)
	test.NewTempWindow(t, o)
	variant := app.Settings().ThemeVariant()
	if got, want := m.rect.FillColor, first.Color(theme.ColorNameSelection, variant); got != want {
		t.Errorf("mark drawn in %v, want the theme's selection colour %v", got, want)
	}
	o.Theme = second
	o.Refresh()
	if got, want := m.rect.FillColor, second.Color(theme.ColorNameSelection, variant); got != want || got == first.Color(theme.ColorNameSelection, variant) {
		t.Errorf("after a theme change the mark is drawn in %v, want %v", got, want)
	}
}

// marked is the title of the list's rows drawn marked open.
func marked(t *testing.T, v *conversationsView) string {
	t.Helper()
	var titles []string
	walkRows(t, v, func(mark *openMark, title string, _ *fyne.Container) {
		if mark.Visible() {
			titles = append(titles, title)
		}
	})
	return strings.Join(titles, ", ")
}

// rowTitles are the titles of the rows drawn, top first.
func rowTitles(t *testing.T, v *conversationsView) []string {
	t.Helper()
	var titles []string
	walkRows(t, v, func(_ *openMark, title string, _ *fyne.Container) { titles = append(titles, title) })
	return titles
}

// walkRows visits the list's rows drawn, top first.
func walkRows(t *testing.T, v *conversationsView, visit func(mark *openMark, title string, row *fyne.Container)) {
	t.Helper()
	type row struct {
		y     float32
		mark  *openMark
		title string
		c     *fyne.Container
	}
	var rows []row
	walk(t, v.list, func(o fyne.CanvasObject) bool {
		c, ok := o.(*fyne.Container)
		if !ok || len(c.Objects) != 2 {
			return false
		}
		mark, ok := c.Objects[0].(*openMark)
		if ok {
			title := c.Objects[1].(*fyne.Container).Objects[0].(*widget.Label).Text
			rows = append(rows, row{fyne.CurrentApp().Driver().AbsolutePositionForObject(c).Y, mark, title, c})
		}
		return ok
	})
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.y, b.y) })
	for _, r := range rows {
		visit(r.mark, r.title, r.c)
	}
}

// TestOpeningARunningConversation: everything so far shows (stored and
// live), a new piece of text changes only the text being written, and
// the turn's end brings the stored transcript back. Stop works at once,
// before the stored transcript is read. A question waiting here says who
// is asked and opens its popup.
func TestOpeningARunningConversation(t *testing.T) {
	q := agent.Question{ID: "q1", Kind: agent.KindQuestion, Agent: "scribe", ConversationID: "c2", TurnID: "t2", Text: "Which folder?", ExpiresAt: time.Now().Add(time.Hour)}
	questions := &fakeQuestions{pending: []agent.Question{q}}
	a, ui, convs := conversationsFixture(t, questions)
	v := a.conversations
	call := agent.Message{Role: agent.RoleAssistant, TurnID: "t2", ToolCalls: []agent.ToolCall{{ID: "k1", Name: "read_file", Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}}
	result := agent.Message{Role: agent.RoleTool, TurnID: "t2", ToolCallID: "k1", ToolName: "read_file", Content: "buy milk"}
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Agent: "scribe", Messages: []agent.Message{call, result}, Writing: "I will", Chunks: 2, OutputTokens: 5})
	v.open("c2")
	if v.stop.Disabled() {
		t.Error("Stop waits for the stored transcript to be read")
	}
	ui.settle()
	got := v.text()
	for _, want := range []string{"You: tidy my notes", "[read_file · path: notes.txt]", "→ buy milk", "Scribe: I will", "Running · writing… ≈7 tokens so far"} {
		if !strings.Contains(got, want) {
			t.Errorf("the running conversation lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "tidy my notes") != 1 {
		t.Errorf("the running turn shows twice:\n%s", got)
	}
	if v.writing.Text != "I will" {
		t.Errorf("writing %q", v.writing.Text)
	}
	call1 := findCallRow(v.live)
	if call1 == nil || call1.title.Text != "read_file · path: notes.txt" || call1.detail.Visible() {
		t.Fatalf("the tool call is not a closed one-liner: %+v", call1)
	}
	test.Tap(call1.toggle)
	if details, _ := conversationTexts(call1.detail); !call1.detail.Visible() || details != "path: notes.txt\nbuy milk\n" {
		t.Errorf("the opened call shows %q", details)
	}
	test.Tap(call1.toggle)
	if call1.detail.Visible() {
		t.Error("the call did not close")
	}
	drawn := v.live.Objects
	if v.stop.Disabled() {
		t.Error("no way to stop the running turn")
	}

	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Agent: "scribe", Messages: []agent.Message{call, result}, Writing: "I will sort", Chunks: 3, OutputTokens: 5})
	a.handle(agent.Event{Kind: agent.EventDelta, Conversation: "c2", Text: " sort"})
	ui.settle()
	if v.writing.Text != "I will sort" || v.liveNote.Text != "Running · writing… ≈8 tokens so far" {
		t.Errorf("after a delta: %q, %q", v.writing.Text, v.liveNote.Text)
	}
	if len(v.live.Objects) != len(drawn) || v.live.Objects[1] != drawn[1] {
		t.Error("a delta redrew the running turn")
	}

	// The question waiting here.
	if len(v.asking.Objects) != 1 {
		t.Fatalf("questions shown: %d", len(v.asking.Objects))
	}
	labels, buttons := conversationTexts(v.asking)
	if !strings.Contains(labels, "Scribe is waiting for an answer: Which folder?") || !strings.Contains(labels, "come to you here") {
		t.Errorf("the question reads %q", labels)
	}
	if len(buttons) != 1 || buttons[0].Text != "Answer…" {
		t.Fatalf("buttons %v", buttons)
	}
	test.Tap(buttons[0])
	if _, ok := a.questions.popups["q1"]; !ok {
		t.Error("Answer… opened no popup")
	}
	a.questions.closed("q1") // as when answered: a popup keeps the App busy while open
	test.Tap(v.stop)
	if len(convs.cancelled) != 1 || convs.cancelled[0] != "c2" || v.status.Text != "Stopping the turn…" {
		t.Errorf("Stop cancelled %v: %q", convs.cancelled, v.status.Text)
	}

	// The turn ends: the stored transcript replaces the live one.
	convs.mu.Lock()
	convs.messages["c2"] = append(convs.messages["c2"], call, result, agent.Message{Role: agent.RoleAssistant, Content: "I will sort them.", TurnID: "t2"})
	convs.turns["c2"] = []agent.Turn{{ID: "t2", Status: agent.TurnFailed, Error: "the model stopped", ToolCalls: 1}}
	convs.mu.Unlock()
	convs.setLive("c2", agent.LiveTurn{})
	questions.setPending()
	a.handle(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c2"})
	ui.settle()
	got = v.text()
	if !strings.Contains(got, "Scribe: I will sort them.") || !strings.HasSuffix(got, "— Failed · 1 tool call: the model stopped") {
		t.Errorf("after the turn:\n%s", got)
	}
	if !v.stop.Disabled() {
		t.Error("Stop stays enabled once the turn ended")
	}
	if len(v.live.Objects) != 0 || v.words.Visible() || v.liveNote.Visible() || len(v.asking.Objects) != 0 {
		t.Error("the live turn or the question stayed after the end")
	}
	last := v.history.Objects[len(v.history.Objects)-1].(*widget.Label)
	if last.Importance != widget.DangerImportance {
		t.Errorf("a failed turn's line has importance %v", last.Importance)
	}
}

// TestListReadsAreCoalesced: calls arriving in a burst read the list
// twice, not once per call.
func TestListReadsAreCoalesced(t *testing.T) {
	a, ui, _ := conversationsFixture(t, nil)
	counting := &countingConversations{Conversations: a.conversations.core.Conversations}
	a.conversations.core.Conversations = counting
	for range 5 {
		a.handle(agent.Event{Kind: agent.EventTurnStarted, Conversation: "c9"})
	}
	ui.settle()
	if n := counting.reads.Load(); n != 2 {
		t.Errorf("5 calls read the list %d times, want 2", n)
	}
}

// TestABurstOfTextIsOneUpdate: pieces of text queued together update the
// transcript once, with all of them.
func TestABurstOfTextIsOneUpdate(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "a"})
	a.conversations.open("c2")
	ui.settle()
	counting := &countingConversations{Conversations: a.conversations.core.Conversations}
	a.conversations.core.Conversations = counting
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "abcdef", Chunks: 6})
	for _, piece := range []string{"b", "c", "d", "e", "f"} {
		a.handle(agent.Event{Kind: agent.EventDelta, Conversation: "c2", Text: piece})
	}
	ui.settle()
	if n := counting.snapshots.Load(); n != 1 || a.conversations.writing.Text != "abcdef" {
		t.Errorf("5 pieces: %d updates, text %q", n, a.conversations.writing.Text)
	}
}

// TestConversationsFitANarrowWindow: at 640 pixels, nothing of a row but
// its title is cut.
func TestConversationsFitANarrowWindow(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	convs.addConversation(agent.ConversationSummary{Conversation: agent.Conversation{ID: "c3", AgentID: "a2", Title: strings.Repeat("a long title ", 10)}, LastStatus: agent.TurnInterrupted})
	long := strings.Repeat("a-long-folder-name/", 12)
	call := agent.Message{Role: agent.RoleAssistant, TurnID: "t2", ToolCalls: []agent.ToolCall{{ID: "k", Name: "read_file", Arguments: json.RawMessage(`{"path":"` + long + `"}`)}}}
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Messages: []agent.Message{call}, Writing: long})
	a.tabs.SelectIndex(tabConversations) // a hidden tab is not measured again
	a.conversations.refresh()
	ui.settle()
	a.conversations.open("c2")
	ui.settle()
	findCallRow(a.conversations.live).flip()
	if w := a.tabs.Items[2].Content.MinSize().Width; w > 600 {
		t.Errorf("the Conversations tab needs %.0f pixels", w)
	}
	row := newConversationRow()
	setConversationRow(row, conversationLabel(convs.conversations[0], "a very long agent name indeed", "a revoked client", true, time.Now()), true)
	line := row.(*fyne.Container).Objects[1].(*fyne.Container).Objects[1]
	right := line.(*fyne.Container).Objects[1]
	if w := row.MinSize().Width; w > 0.38*600 {
		t.Errorf("a row needs %.0f pixels", w)
	}
	if right.MinSize().Width > row.MinSize().Width {
		t.Error("the state and time do not fit their row")
	}
}

func findCallRow(c *fyne.Container) *callRow {
	for _, o := range c.Objects {
		if r, ok := o.(*callRow); ok {
			return r
		}
	}
	return nil
}

// conversationTexts collects the labels' text and the buttons under o.
func conversationTexts(o fyne.CanvasObject) (string, []*widget.Button) {
	var b strings.Builder
	var buttons []*widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *widget.Button:
			buttons = append(buttons, w)
		case *widget.Card:
			walk(w.Content)
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return b.String(), buttons
}

// TestConversationsFromTheKeyboard: Tab reaches the search, then the
// list; arrows move in the list and Space opens a conversation.
func TestConversationsFromTheKeyboard(t *testing.T) {
	a, ui, _ := conversationsFixture(t, nil)
	a.tabs.SelectIndex(2)
	v, c := a.conversations, a.win.Canvas()
	c.FocusNext()
	if c.Focused() != v.search {
		t.Fatalf("Tab first focused %T, not the search", c.Focused())
	}
	c.FocusNext()
	if c.Focused() != v.list {
		t.Fatalf("Tab next focused %T, not the list", c.Focused())
	}
	v.list.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	v.list.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	ui.settle()
	if v.current != "c2" || v.selected != 1 {
		t.Errorf("Down and Space opened %q (row %d)", v.current, v.selected)
	}
}

// TestATranscriptThatCannotBeRead says why, in the error colour.
func TestATranscriptThatCannotBeRead(t *testing.T) {
	a, ui, _ := conversationsFixture(t, nil)
	v := a.conversations
	v.core.Conversations = unreadableConversations{v.core.Conversations}
	v.open("c1")
	ui.settle()
	if v.status.Text != "the history could not be read: disk I/O error" || v.status.Importance != widget.DangerImportance {
		t.Errorf("status %q (importance %v)", v.status.Text, v.status.Importance)
	}
}

// TestTranscriptChangesStayInTheTranscript: what the open transcript
// shows as a turn runs (its note, a question's card) does not change the
// minimum size of the tab around it, which fyne would lay out again with
// every tab's button at each change.
func TestTranscriptChangesStayInTheTranscript(t *testing.T) {
	qs := &fakeQuestions{}
	a, ui, convs := conversationsFixture(t, qs)
	v := a.conversations
	a.win.Resize(fyne.NewSize(1000, 720))
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2"})
	v.open("c2")
	ui.settle()
	tab := a.tabs.Items[tabConversations].Content
	before := tab.MinSize()
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "Tidying", Chunks: 1234567, OutputTokens: 10})
	v.syncLive(false)
	q := question("q1")
	q.ConversationID, q.Agent = "c2", "scribe"
	qs.setPending(q)
	v.event(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1", Conversation: "c2"}) // no popup
	ui.settle()
	if len(v.asking.Objects) != 1 || !v.liveNote.Visible() {
		t.Fatalf("%d questions drawn, note shown %v: the test draws neither", len(v.asking.Objects), v.liveNote.Visible())
	}
	if got := tab.MinSize(); got != before {
		t.Errorf("the tab's minimum moved from %v to %v", before, got)
	}
}

// TestShortTranscriptAfterALongOneShows: opening a short conversation
// after reading the end of a long one shows the short one's text, not
// the blank below it (the scroll used to keep the long one's offset).
func TestShortTranscriptAfterALongOneShows(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	long := strings.Repeat("a line of text\n", 200)
	convs.mu.Lock()
	convs.messages["c2"] = []agent.Message{{Role: agent.RoleUser, Content: long, TurnID: "t2"}}
	convs.turns["c2"] = []agent.Turn{{ID: "t2", Status: agent.TurnCompleted}}
	convs.mu.Unlock()
	v.open("c2")
	ui.settle()
	if v.scroll.Offset.Y <= 0 {
		t.Fatalf("the long transcript is not scrolled to its end (%.0f): the test needs more text", v.scroll.Offset.Y)
	}
	v.open("c1")
	ui.settle()
	if end := max(0, v.transcript.MinSize().Height-v.scroll.Size().Height); v.scroll.Offset.Y > end {
		t.Errorf("the short transcript is scrolled to %.0f, past its end %.0f: the pane shows nothing", v.scroll.Offset.Y, end)
	}
}
