package desktop

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// listClock drives the list's window: a time the test moves and the
// timers set meanwhile, fired by hand.
type listClock struct {
	t      time.Time
	timers []func()
}

func (c *listClock) now() time.Time { return c.t }

func (c *listClock) after(_ time.Duration, f func()) { c.timers = append(c.timers, f) }

// fire ends the window: the clock moves past it and the timers set run.
func (c *listClock) fire() {
	c.t = c.t.Add(listEvery)
	timers := c.timers
	c.timers = nil
	for _, f := range timers {
		f()
	}
}

// TestListReadsOncePerWindow: a thousand calls starting and ending within
// one window read the list once at its start and once at its end (each
// read done before the next event comes, as under load), the last read
// showing the last call; while the tab or the window cannot be seen the
// list is not read at all, and it is read once when it can again.
func TestListReadsOncePerWindow(t *testing.T) {
	for _, c := range []struct {
		name      string
		hide      func(a *App)
		show      func(a *App)
		wantReads int32 // within the window, events done
		wantAfter int32 // once the window ended, or the tab shows
	}{
		{"tab shown", func(*App) {}, func(*App) {}, 1, 2},
		{"another tab", func(a *App) { a.tabs.SelectIndex(tabAgents) }, func(a *App) { a.tabs.SelectIndex(tabConversations) }, 0, 1},
		{"window closed to the tray", func(a *App) { a.closeToTray() }, func(a *App) { a.Show() }, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ui, convs := conversationsFixture(t, nil)
			v := a.conversations
			clock := &listClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
			v.lister.now, v.lister.after, v.lister.last = clock.now, clock.after, time.Time{}
			counting := &countingConversations{Conversations: v.core.Conversations}
			v.core.Conversations = counting
			c.hide(a)
			for i := range 1000 {
				kind := agent.EventTurnStarted
				if i%2 == 1 {
					kind = agent.EventTurnEnded
				}
				v.event(agent.Event{Kind: kind, Conversation: "c9"})
				ui.settle()
			}
			convs.addConversation(agent.ConversationSummary{Conversation: agent.Conversation{ID: "c9", AgentID: "a1", Title: "the last call"}})
			v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c9"})
			ui.settle()
			if n := counting.reads.Load(); n != c.wantReads {
				t.Errorf("1,001 events in a window: %d reads, want %d", n, c.wantReads)
			}
			c.show(a)
			clock.fire()
			ui.settle()
			if n := counting.reads.Load(); n != c.wantAfter {
				t.Errorf("after the window: %d reads, want %d", n, c.wantAfter)
			}
			if rowOf(v.shown, "c9") != 0 {
				t.Errorf("the last call is not listed first: %+v", v.shown)
			}
		})
	}
}

// TestAQuestionMarksItsRowAtOnce: a question asked marks its
// conversation's row before the list is read again.
func TestAQuestionMarksItsRowAtOnce(t *testing.T) {
	questions := &fakeQuestions{}
	a, ui, _ := conversationsFixture(t, questions)
	v := a.conversations
	clock := &listClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	v.lister.now, v.lister.after, v.lister.last = clock.now, clock.after, clock.t
	built := 0
	create := v.list.CreateItem
	v.list.CreateItem = func() fyne.CanvasObject { built++; return create() }
	questions.setPending(agent.Question{ID: "q1", Kind: agent.KindQuestion, Agent: "assistant", ConversationID: "c1", Text: "Which?"})
	v.event(agent.Event{Kind: agent.EventQuestionAsked, Conversation: "c1", Question: "q1"})
	ui.settle()
	if !v.waiting["c1"] || len(clock.timers) != 1 {
		t.Errorf("waiting %v, %d reads due", v.waiting, len(clock.timers))
	}
	state := map[string]widget.Importance{}
	walkRows(t, v, func(_ *openMark, title string, row *fyne.Container) {
		line := row.Objects[1].(*fyne.Container).Objects[1].(*fyne.Container)
		state[title] = line.Objects[1].(*fyne.Container).Objects[0].(*widget.Label).Importance
	})
	if state["name game"] != widget.WarningImportance || state["notes"] == widget.WarningImportance {
		t.Errorf("rows' states drawn %v: only name game's should wait", state)
	}
	if built != 0 {
		t.Errorf("the list was refreshed whole (%d rows built)", built)
	}
}

// TestATurnMarksItsRowAtOnce: a turn ending in a listed conversation
// shows in its row before the list is read again, which
// under a stream of calls waits up to listEvery: at once, or at the end
// of markEvery after the last such redraw.
func TestATurnMarksItsRowAtOnce(t *testing.T) {
	a, ui, _ := conversationsFixture(t, nil)
	v := a.conversations
	clock := &listClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	v.lister.now, v.lister.after, v.lister.last = clock.now, clock.after, clock.t
	counting := &countingConversations{Conversations: v.core.Conversations}
	v.core.Conversations = counting
	states := func() map[string]string {
		out := map[string]string{}
		walkRows(t, v, func(_ *openMark, title string, row *fyne.Container) {
			line := row.Objects[1].(*fyne.Container).Objects[1].(*fyne.Container)
			out[title] = line.Objects[1].(*fyne.Container).Objects[0].(*widget.Label).Text
		})
		return out
	}
	if got := states(); got["notes"] != "running" || got["name game"] != "done" {
		t.Fatalf("rows at first: %v", got)
	}
	marks := &listClock{t: clock.t}
	v.marker.now, v.marker.after = marks.now, marks.after
	at := clock.t.Add(time.Minute)
	v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c2", Status: agent.TurnFailed, Time: at})
	ui.settle()
	if got := states(); got["notes"] != "failed" || got["name game"] != "done" {
		t.Errorf("rows after a turn ended in notes: %v", got)
	}
	// Another within markEvery: the rows are redrawn at its end.
	v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c1", Status: agent.TurnCancelled, Time: at})
	ui.settle()
	if got := states(); got["name game"] != "done" || len(marks.timers) != 1 {
		t.Errorf("rows redrawn again within markEvery: %v", got)
	}
	marks.fire()
	ui.settle()
	if got := states(); got["notes"] != "failed" || got["name game"] != "stopped" {
		t.Errorf("rows once markEvery passed: %v", got)
	}
	if n := counting.reads.Load(); n != 0 || len(clock.timers) != 1 {
		t.Errorf("%d reads, %d due: the rows should not wait for one", n, len(clock.timers))
	}
}

// TestATurnEndAddsToTheHistory: when a turn of the open conversation
// ends, its widgets are added after those drawn, which stay the same
// objects; a turn starting draws nothing again; a change to an earlier
// turn (here a question answered) draws that turn and those after it
// again, not those before.
func TestATurnEndAddsToTheHistory(t *testing.T) {
	questions := &fakeQuestions{}
	a, ui, convs := conversationsFixture(t, questions)
	v := a.conversations
	v.open("c1")
	ui.settle()
	before := append([]fyne.CanvasObject(nil), v.history.Objects...)
	at := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)

	addTurn := func(id, asked, said string) {
		convs.mu.Lock()
		defer convs.mu.Unlock()
		convs.messages["c1"] = append(convs.messages["c1"], agent.Message{Role: agent.RoleUser, Content: asked, TurnID: id}, agent.Message{Role: agent.RoleAssistant, Content: said, TurnID: id})
		convs.turns["c1"] = append(convs.turns["c1"], agent.Turn{ID: id, Status: agent.TurnCompleted, StartedAt: at, EndedAt: at})
	}
	for i, id := range []string{"t3", "t4", "t5"} {
		convs.setLive("c1", agent.LiveTurn{TurnID: id, Agent: "assistant"})
		v.event(agent.Event{Kind: agent.EventTurnStarted, Conversation: "c1", Text: "turn " + id})
		ui.settle()
		addTurn(id, "turn "+id, "done "+id)
		convs.setLive("c1", agent.LiveTurn{})
		v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c1"})
		ui.settle()
		if v.redrawn != 0 {
			t.Fatalf("turn %d: %d turns were drawn again", i+1, v.redrawn)
		}
		if !strings.Contains(v.text(), "done "+id) {
			t.Fatalf("turn %s is not shown:\n%s", id, v.text())
		}
	}
	for i, o := range before {
		if v.history.Objects[i] != o {
			t.Fatalf("object %d of the first turn was drawn again", i)
		}
	}
	if len(v.drawn) != 4 || len(v.history.Objects) <= len(before) {
		t.Errorf("drawn %d turns, %d objects", len(v.drawn), len(v.history.Objects))
	}

	// An earlier turn changes: a question of it is now answered. It and
	// the turns after it are drawn again, the first turn stays.
	convs.mu.Lock()
	convs.questions = map[string][]agent.Question{"c1": {{ID: "q1", Kind: agent.KindQuestion, TurnID: "t3", ConversationID: "c1", Status: agent.QuestionAnswered, Answer: &agent.Answer{Text: "yes", By: agent.ByDesktop}}}}
	convs.messages["c1"][3] = agent.Message{Role: agent.RoleAssistant, TurnID: "t3", ToolCalls: []agent.ToolCall{{ID: "k1", Name: "ask_user", Arguments: []byte(`{"question":"Sure?"}`)}}}
	convs.mu.Unlock()
	v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c1"})
	ui.settle()
	if v.redrawn != 3 || !strings.Contains(v.text(), "answered by you, in Deskhand: yes") {
		t.Errorf("the second turn of four changed: %d turns drawn again,\n%s", v.redrawn, v.text())
	}
	for i, o := range before {
		if v.history.Objects[i] != o {
			t.Fatalf("object %d of the first turn was drawn again", i)
		}
	}
	if len(v.drawn) != 4 || strings.Count(v.text(), "done t") != 2 {
		t.Errorf("drawn %d turns:\n%s", len(v.drawn), v.text())
	}
}

// TestLoadProbe: with the load probe on, the window opens on the
// Conversations tab with the latest conversation, and a question's popup
// logs a line with its ID when shown; without it, neither.
func TestLoadProbe(t *testing.T) {
	for _, probe := range []bool{false, true} {
		t.Run(fmt.Sprint(probe), func(t *testing.T) {
			at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
			convs := &fakeConversations{conversations: []agent.ConversationSummary{
				{Conversation: agent.Conversation{ID: "c2", AgentID: "a1", Principal: agent.LocalPrincipal, Title: "latest", UpdatedAt: at}},
				{Conversation: agent.Conversation{ID: "c1", AgentID: "a1", Principal: agent.LocalPrincipal, Title: "older", UpdatedAt: at}},
			}}
			q := agent.Question{ID: "q7", Kind: agent.KindQuestion, Agent: "assistant", ConversationID: "c2", Text: "Which?", ExpiresAt: time.Now().Add(time.Hour)}
			var log bytes.Buffer
			opts := testOptions()
			opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
			was := loadProbe
			loadProbe = probe
			t.Cleanup(func() { loadProbe = was })
			a, ui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{fakeConversations: convs, fakeQuestions: &fakeQuestions{pending: []agent.Question{q}}}).asCore(), opts))
			a.conversations.lister.after = func(_ time.Duration, f func()) { a.onUI(f) }
			a.refresh()
			ui.settle()
			a.questions.popup("q7")
			a.questions.closed("q7") // a popup keeps its countdown running while open
			ui.settle()
			onTab := a.tabs.SelectedIndex() == tabConversations && a.conversations.current == "c2"
			logged := strings.Contains(log.String(), "question popup shown") && strings.Contains(log.String(), "question=q7")
			if onTab != probe || logged != probe {
				t.Errorf("probe %v: on the tab with the latest open %v, popup logged %v", probe, onTab, logged)
			}
		})
	}
}

// TestALongConversationDrawsItsLastPage: a conversation of 25 turns
// opens on its last page; "Show earlier turns" adds a page at a time
// above, saying how many are left, until none are; a turn ending then
// adds to what is drawn; followed at its end past turnsDrawnMost, the
// oldest drawn turns go and the last page stays.
func TestALongConversationDrawsItsLastPage(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	a.win.Resize(fyne.NewSize(1000, 720))
	at := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	addTurns := func(from, n int) {
		convs.mu.Lock()
		defer convs.mu.Unlock()
		for i := from; i < from+n; i++ {
			id := fmt.Sprintf("t%03d", i)
			convs.messages["c1"] = append(convs.messages["c1"], agent.Message{Role: agent.RoleUser, Content: "asked " + id, TurnID: id}, agent.Message{Role: agent.RoleAssistant, Content: "said " + id, TurnID: id})
			convs.turns["c1"] = append(convs.turns["c1"], agent.Turn{ID: id, Status: agent.TurnCompleted, StartedAt: at, EndedAt: at})
		}
	}
	addTurns(2, 24) // with t1, 25 turns
	v.open("c1")
	ui.settle()
	drawn := func() string {
		var ids []string
		for _, d := range v.drawn {
			ids = append(ids, d.id)
		}
		return fmt.Sprintf("%d drawn, %s to %s", len(ids), ids[0], ids[len(ids)-1])
	}
	for _, want := range []struct{ drawn, earlier string }{
		{"10 drawn, t016 to t025", "Show earlier turns (15 turns not shown)"},
		{"20 drawn, t006 to t025", "Show earlier turns (5 turns not shown)"},
		{"25 drawn, t1 to t025", ""},
	} {
		earlier := ""
		if v.earlier.Visible() {
			earlier = v.earlier.Text
		}
		if got := drawn(); got != want.drawn || earlier != want.earlier {
			t.Fatalf("%s, %q; want %s, %q", got, earlier, want.drawn, want.earlier)
		}
		test.Tap(v.earlier)
		ui.settle()
	}
	if n := strings.Count(v.text(), "said t"); n != 24 {
		t.Errorf("the copied transcript has %d of 24 answers", n)
	}

	addTurns(26, 1)
	v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c1"})
	ui.settle()
	if got := drawn(); got != "26 drawn, t1 to t026" || v.redrawn != 0 {
		t.Fatalf("after a turn: %s, %d drawn again", got, v.redrawn)
	}

	// Followed at its end, the conversation grows past turnsDrawnMost.
	addTurns(27, turnsDrawnMost-26+1)
	v.toBottom()
	v.event(agent.Event{Kind: agent.EventTurnEnded, Conversation: "c1"})
	ui.settle()
	if got := drawn(); got != "10 drawn, t032 to t041" || !v.earlier.Visible() {
		t.Errorf("past %d turns followed at the end: %s, earlier shown %v", turnsDrawnMost, got, v.earlier.Visible())
	}
}
