package desktop

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// TestTypingWatch: a change of the focused field's text between two looks
// is typing, for typingQuiet; focusing a field, or a button, is not.
func TestTypingWatch(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	name, other := widget.NewEntry(), widget.NewEntry()
	button := widget.NewButton("Save", nil)
	var w typingWatch
	for _, step := range []struct {
		at      time.Duration
		focused fyne.Focusable
		typed   string
		typing  bool
	}{
		{0, name, "", false},
		{200 * time.Millisecond, name, "My", true},
		{1 * time.Second, name, "", true},
		{2300 * time.Millisecond, name, "", false},   // 2 s after the last key
		{2500 * time.Millisecond, other, "x", false}, // a field just focused
		{2700 * time.Millisecond, button, "", false},
		{2900 * time.Millisecond, name, "", false}, // back: its text is as it was
	} {
		if e, ok := step.focused.(*widget.Entry); ok && step.typed != "" {
			e.SetText(e.Text + step.typed)
		}
		now := t0.Add(step.at)
		w.sample(step.focused, now)
		if typing := w.quietAt().After(now); typing != step.typing {
			t.Errorf("at %v: typing %v, want %v", step.at, typing, step.typing)
		}
	}
}

// TestPopupWaitsWhileTyping: a question that arrives while the person
// types an agent's name opens its popup once they stop; every key lands
// in the name, none in the answer. One that arrives while they do not
// type opens at once.
func TestPopupWaitsWhileTyping(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	core := &fakeQuestions{pending: []agent.Question{question("q1"), question("q2")}}
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	var timers []func()
	a.questions.now = func() time.Time { return now }
	a.questions.after = func(d time.Duration, f func()) {
		if got := now.Add(d); !got.Equal(a.typing.quietAt()) {
			t.Errorf("the popup waits until %v, want when typing stops, %v", got, a.typing.quietAt())
		}
		timers = append(timers, f)
	}
	a.agents.newAgent()
	name := a.agents.name
	a.win.Canvas().Focus(name)
	if a.win.Canvas().Focused() != name {
		t.Fatal("the name field does not take the focus")
	}
	a.sampleTyping()

	now = t0.Add(300 * time.Millisecond)
	test.Type(name, "My new ag")
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"})
	if _, shown := a.questions.popups["q1"]; shown || len(timers) != 1 {
		t.Fatalf("while typing: popup shown %v, %d waits; want none shown, one wait", shown, len(timers))
	}
	if len(a.questions.pending) == 0 {
		t.Error("while typing the Questions tab does not list the question")
	}

	now = t0.Add(time.Second)
	test.Type(name, "ent name")
	a.sampleTyping()
	now = t0.Add(2300 * time.Millisecond)
	fire := timers[0]
	timers = nil
	fire()
	if _, shown := a.questions.popups["q1"]; shown || len(timers) != 1 {
		t.Fatalf("still typing a second ago: popup shown %v, %d waits", shown, len(timers))
	}

	now = t0.Add(3100 * time.Millisecond)
	timers[0]()
	p, shown := a.questions.popups["q1"]
	if !shown {
		t.Fatal("no popup once the person stopped typing")
	}
	if name.Text != "My new agent name" || p.text.Text != "" {
		t.Errorf("name %q, answer %q; want the whole name typed and no answer", name.Text, p.text.Text)
	}

	timers = nil
	now = t0.Add(10 * time.Second)
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q2"})
	if _, shown := a.questions.popups["q2"]; !shown || len(timers) != 0 {
		t.Errorf("not typing: popup shown %v, %d waits; want it at once", shown, len(timers))
	}
}
