package desktop

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/deskhand/deskhand/server/agent"
)

// trayApp is fyne's test app with a tray that counts what it is told.
type trayApp struct {
	fyne.App
	menus, icons []string
}

func (t *trayApp) SetSystemTrayMenu(m *fyne.Menu)    { t.menus = append(t.menus, menuText(m.Items)) }
func (t *trayApp) SetSystemTrayIcon(r fyne.Resource) { t.icons = append(t.icons, r.Name()) }
func (t *trayApp) SetSystemTrayWindow(fyne.Window)   {}

// withTray is the whole desktop on servingCore with a tray that counts
// what it is told, its state shown once.
func withTray(t *testing.T) (*App, *fakeCore, *trayApp) {
	t.Helper()
	core := servingCore()
	opts := testOptions()
	opts.Tray, opts.Icon, opts.QuestionIcon = true, theme.ComputerIcon(), theme.QuestionIcon()
	tray := &trayApp{App: test.NewTempApp(t)}
	a, ui := withTestUI(t, New(tray, core.asCore(), opts))
	a.refresh()
	ui.settle()
	return a, core, tray
}

// TestStateShownOnlyWhenItChanges: the state is shown again after every
// turn (at most every statusEvery); the status bar and the tray are told
// only what changed, since each telling redraws the whole window or
// sends the tray a D-Bus message (the icon's pixels whole). A question
// waiting changes the tray's menu and icon once; the same state again
// changes nothing.
func TestStateShownOnlyWhenItChanges(t *testing.T) {
	a, core, tray := withTray(t)

	// repeat shows the state as often as turns would, and returns what
	// the tray was told meanwhile.
	repeat := func(what string) (menus, icons int) {
		t.Helper()
		m, i, shown := len(tray.menus), len(tray.icons), a.status.onScreen
		for range 50 {
			a.showState()
		}
		if a.status.onScreen != shown {
			t.Errorf("%s: the status bar was shown again with nothing changed", what)
		}
		return len(tray.menus) - m, len(tray.icons) - i
	}
	if m, i := repeat("serving"); m+i != 0 {
		t.Errorf("serving, shown 50 times: the tray got %d menus and %d icons, want none", m, i)
	}

	later := time.Now().Add(questionsEvery) // the tray changes at most every questionsEvery
	a.status.now = func() time.Time { return later }
	core.fakeQuestions.setPending(question("q1"))
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"}) // its popup counts down: no settling
	if n := len(tray.icons); n == 0 || tray.icons[n-1] != theme.QuestionIcon().Name() {
		t.Fatalf("a question waits: tray icons %q, want the question icon last", tray.icons)
	}
	if n := len(tray.menus); n == 0 || menuText(a.trayMenu.Items) != tray.menus[n-1] {
		t.Fatalf("a question waits: the tray's menu was not told")
	}
	if a.tabs.Items[tabQuestions].Text != "Questions (1)" {
		t.Errorf("a question waits: tab %q", a.tabs.Items[tabQuestions].Text)
	}
	if m, i := repeat("a question waiting"); m+i != 0 {
		t.Errorf("a question waiting, shown 50 times: the tray got %d menus and %d icons, want none", m, i)
	}
}

// TestQuestionsTitleChangesAtMostEveryFiveSeconds: while questions come
// and go, the Questions tab's title changes at most every questionsEvery (a
// title changed repaints the whole window), the last count once that has passed.
func TestQuestionsTitleChangesAtMostEveryFiveSeconds(t *testing.T) {
	core := servingCore()
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	a.status.now = func() time.Time { return now }
	title := func() string { return a.tabs.Items[tabQuestions].Text }

	core.fakeQuestions.setPending(question("q1"))
	a.showState()
	if title() != "Questions (1)" {
		t.Fatalf("a question: tab %q, want it at once", title())
	}
	for _, step := range []struct {
		pending []agent.Question
		after   time.Duration
		want    string
	}{
		{[]agent.Question{question("q1"), question("q2")}, questionsEvery / 2, "Questions (1)"},
		{nil, questionsEvery / 4, "Questions (1)"},
		{[]agent.Question{question("q3")}, questionsEvery / 4, "Questions (1)"},
		{[]agent.Question{question("q3"), question("q4")}, 0, "Questions (2)"},
		{nil, questionsEvery, "Questions"},
	} {
		core.fakeQuestions.setPending(step.pending...)
		now = now.Add(step.after)
		a.showState()
		if title() != step.want {
			t.Errorf("%d waiting, %v after: tab %q, want %q", len(step.pending), step.after, title(), step.want)
		}
	}
}

// TestTrayFollowsQuestionsAtMostEveryFiveSeconds: questions that come and
// go within questionsEvery of the tray's last change reach it once that has
// passed; a pause reaches it at once.
func TestTrayFollowsQuestionsAtMostEveryFiveSeconds(t *testing.T) {
	a, core, tray := withTray(t)
	now := time.Now().Add(questionsEvery)
	a.status.now = func() time.Time { return now }
	told := func() int { return len(tray.menus) + len(tray.icons) }

	core.fakeQuestions.setPending(question("q1"))
	a.showState()
	if tray.icons[len(tray.icons)-1] != theme.QuestionIcon().Name() {
		t.Fatalf("a question after a quiet while: icons %q, want the question icon at once", tray.icons)
	}
	before := told()
	for range 10 { // answered by its client, asked again, …
		now = now.Add(questionsEvery / 20)
		core.fakeQuestions.setPending()
		a.showState()
		now = now.Add(questionsEvery / 20)
		core.fakeQuestions.setPending(question("q2"))
		a.showState()
	}
	if n := told() - before; n != 0 {
		t.Errorf("questions coming and going within %v: the tray was told %d times, want none yet", questionsEvery, n)
	}
	now = now.Add(questionsEvery / 20)
	core.fakeQuestions.setPending()
	a.showState()
	now = now.Add(questionsEvery)
	a.showState()
	if tray.icons[len(tray.icons)-1] != theme.ComputerIcon().Name() || told()-before != 2 {
		t.Errorf("%v later: icons %q, told %d times, want the plain icon, menu and icon told once", questionsEvery, tray.icons, told()-before)
	}
	a.setPaused(true)
	if got := tray.menus[len(tray.menus)-1]; !strings.Contains(got, "Resume serving") {
		t.Errorf("paused: the tray's menu reads %s, want Resume at once", got)
	}
}

// TestQuestionsTabDrawnOnlyWhenSeen: questions that come while another
// tab is shown are read (the tray and the popup use them) but their rows
// are drawn once the Questions tab is selected.
func TestQuestionsTabDrawnOnlyWhenSeen(t *testing.T) {
	core := servingCore()
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	a.tabs.SelectIndex(tabConversations)
	ui.settle()
	core.fakeQuestions.setPending(question("q1"))
	a.questions.refresh()
	if len(a.questions.pending) != 1 || len(a.questions.rows) != 0 {
		t.Fatalf("unseen: %d questions read, %d rows drawn; want 1 and none", len(a.questions.pending), len(a.questions.rows))
	}
	a.tabs.SelectIndex(tabQuestions)
	if len(a.questions.rows) != 1 || a.questions.rows[0].q.ID != "q1" {
		t.Errorf("selected: %d rows drawn, want the question's", len(a.questions.rows))
	}
}
