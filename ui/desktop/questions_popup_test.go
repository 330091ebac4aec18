package desktop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

// askedAt is when the screens' questions were asked: the test clock's
// start.
var askedAt = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func askedQuestion(id string) agent.Question {
	return agent.Question{ID: id, Kind: agent.KindQuestion, Agent: "assistant", Text: "What is your name?",
		ConversationID: "conv-1", Principal: "client-1", AskedAt: askedAt, ExpiresAt: askedAt.Add(10 * time.Minute),
		Status: agent.QuestionPending, ClientAsked: true}
}

func questionsWith(qs ...agent.Question) *questionsFake {
	return &questionsFake{fakeQuestions: &fakeQuestions{pending: qs},
		agents:  []agent.Agent{{Slug: "assistant", Name: "Assistant", Routing: agent.RouteClient}, {Slug: "scribe", Routing: agent.RouteClient}},
		clients: []agent.Client{{ID: "client-1", Name: "Cursor"}}}
}

// popupLabels is every label's text under o, in order.
func popupLabels(o fyne.CanvasObject) []string {
	var out []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Label:
			if o.Visible() {
				out = append(out, o.Text)
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case *container.Scroll:
			walk(o.Content)
		}
	}
	walk(o)
	return out
}

func popupSays(o fyne.CanvasObject, s string) bool {
	for _, t := range popupLabels(o) {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// A question's popup says who asks, from which client, who else may
// answer and what happens if nobody does; it has the keyboard on its
// answer, and Enter sends the answer without the stray new line.
func TestQuestionPopupSaysWhoAsksAndSendsOnEnter(t *testing.T) {
	core := questionsWith(askedQuestion("q1"))
	v, _, _ := questionsScreen(t, core)
	v.popup("q1")
	p := v.popups["q1"]
	if p == nil {
		t.Fatal("no popup")
	}
	if got := p.win.Title(); got != "Deskhand: assistant asks" {
		t.Errorf("window title %q", got)
	}
	content := p.win.Content()
	for _, want := range []string{
		"Assistant (assistant) asks you:", "What is your name?",
		"From Cursor. Cursor may ask its user too: the first answer counts.",
		"If nobody answers within 10:00, assistant stops and Cursor is told that nobody answered.",
		"Enter sends. Shift+Enter starts a new line.",
	} {
		if !popupSays(content, want) {
			t.Errorf("the popup does not say %q; it says %q", want, popupLabels(content))
		}
	}
	if p.win.Canvas().Focused() != p.text {
		t.Errorf("focus on %T, want the answer field", p.win.Canvas().Focused())
	}
	// As tall as what it says, not more (nor less: nothing to scroll).
	body := content.(*container.Scroll).Content
	if h, need := p.win.Canvas().Size().Height, body.MinSize().Height; h >= popupMaxHeight || h < need {
		t.Errorf("the popup is %.0f high for %.0f of content", h, need)
	}
	test.Type(p.text, "Ada")
	p.text.KeyDown(keyShift)
	p.text.TypedKey(keyReturn)
	p.text.KeyUp(keyShift)
	test.Type(p.text, "Lovelace  ")
	p.text.TypedKey(keyReturn)
	if want := []map[string]any{{"answer": "Ada\nLovelace"}}; !cmp.Equal(core.answers, want) {
		t.Errorf("answers = %q, want %q", core.answers, want)
	}
}

// The countdown ticks with the clock, and its goroutine ends with the
// popup.
func TestPopupCountdown(t *testing.T) {
	q := askedQuestion("q1")
	q.ConversationID = "" // nothing else queued for fyne's goroutine than the ticks
	core := questionsWith(q)
	v, ui, clock := questionsScreen(t, core)
	v.refresh()
	v.popup("q1")
	p := v.popups["q1"]
	clock.advance(4*time.Minute + 28*time.Second)
	ui.waitQueued(1)
	ui.runQueued()
	if want := "If nobody answers within 5:32, assistant stops and Cursor is told that nobody answered."; p.countdown.Text != want {
		t.Errorf("countdown %q, want %q", p.countdown.Text, want)
	}
	if got := v.rows[0].left.Text; got != "5:32 left" {
		t.Errorf("the list says %q left", got)
	}
	clock.advance(6 * time.Minute)
	ui.waitQueued(1)
	ui.runQueued()
	if !strings.HasPrefix(p.countdown.Text, "Time is up") {
		t.Errorf("countdown after the time: %q", p.countdown.Text)
	}
	v.closed("q1")
	ui.settle() // returns once the countdown's goroutine has ended
	if clock.stopped() != 1 {
		t.Errorf("%d tickers stopped, want 1", clock.stopped())
	}
}

// Closing the App ends a popup's countdown too.
func TestCloseEndsTheCountdown(t *testing.T) {
	v, _, clock := questionsScreen(t, questionsWith(askedQuestion("q1")))
	v.popup("q1")
	closed := make(chan struct{})
	go func() {
		v.app.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for the countdown forever")
	}
	if clock.stopped() != 1 {
		t.Errorf("%d tickers stopped, want 1", clock.stopped())
	}
}

// The popup shows the conversation's last exchange, read in the
// background, and grows to show it.
func TestPopupShowsTheLastExchange(t *testing.T) {
	core := questionsWith(askedQuestion("q1"))
	core.read = make(chan string, 1)
	core.messages = map[string][]agent.Message{"conv-1": {
		{Role: agent.RoleUser, Content: "Write me a greeting", CreatedAt: askedAt.Add(-time.Minute)},
	}}
	v, ui, _ := questionsScreen(t, core)
	v.popup("q1")
	if id := <-core.read; id != "conv-1" {
		t.Errorf("read conversation %q", id)
	}
	ui.waitQueued(1)
	ui.runQueued()
	p := v.popups["q1"]
	if want := "Before this, in the conversation:\nCursor: Write me a greeting"; !p.exchange.Visible() || p.exchange.Text != want {
		t.Errorf("exchange (shown %v) %q, want %q", p.exchange.Visible(), p.exchange.Text, want)
	}
	if h, need := p.win.Canvas().Size().Height, p.body.MinSize().Height; h < need {
		t.Errorf("the popup is %.0f high for %.0f of content, the exchange added", h, need)
	}
}

// A choice popup has the keyboard on its first choice; the digit keys
// choose.
func TestChoicePopupDigits(t *testing.T) {
	q := askedQuestion("c1")
	q.Choices = []string{"red", "blue"}
	core := questionsWith(q)
	v, _, _ := questionsScreen(t, core)
	v.popup("c1")
	p := v.popups["c1"]
	if p.win.Canvas().Focused() != p.choices[0] {
		t.Errorf("focus on %T, want the first choice", p.win.Canvas().Focused())
	}
	if p.choices[1].Text != "2. blue" {
		t.Errorf("second choice reads %q", p.choices[1].Text)
	}
	test.Type(p.choices[0], "3") // no third choice
	test.Type(p.choices[0], "x")
	if len(core.answers) != 0 {
		t.Fatalf("answered %v with a key that chooses nothing", core.answers)
	}
	test.Type(p.choices[0], "2")
	if want := []map[string]any{{"answer": "blue"}}; !cmp.Equal(core.answers, want) {
		t.Errorf("answers = %v, want %v", core.answers, want)
	}
}

// An approval shows the exact action and has the keyboard on its
// comment: Enter there starts a new line and never approves; Ctrl+Enter
// approves with the comment.
func TestApprovalPopupKeys(t *testing.T) {
	q := agent.Question{ID: "a1", Kind: agent.KindApproval, Agent: "scribe", Tool: "write_file", Principal: "client-1",
		Arguments: json.RawMessage(`{"path":"notes.txt","content":"hello"}`), AskedAt: askedAt, ExpiresAt: askedAt.Add(time.Minute)}
	core := questionsWith(q)
	v, _, _ := questionsScreen(t, core)
	v.popup("a1")
	p := v.popups["a1"]
	content := p.win.Content()
	for _, want := range []string{"scribe asks to run a tool:", "Tool: write_file\nFile: notes.txt\nContent:\nhello",
		"Only you can approve this, here.", "If nobody answers within 1:00, write_file is not run, scribe stops, and Cursor is told that nobody answered."} {
		if !popupSays(content, want) {
			t.Errorf("the popup does not say %q; it says %q", want, popupLabels(content))
		}
	}
	if p.decline != nil {
		t.Error("an approval offers Decline beside Deny")
	}
	if p.win.Canvas().Focused() != p.comment {
		t.Fatalf("focus on %T, want the comment", p.win.Canvas().Focused())
	}
	test.Type(p.comment, "only this once")
	p.comment.TypedKey(keyReturn)
	if len(core.answers) != 0 {
		t.Fatalf("Enter approved: %v", core.answers)
	}
	p.comment.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl})
	if want := []map[string]any{{"approve": true, "comment": "only this once"}}; !cmp.Equal(core.answers, want) {
		t.Errorf("answers = %v, want %v", core.answers, want)
	}
}

// The Questions tab says when nothing waits, and lists each question
// with its agent, client, time left and who is asked; Answer… opens the
// popup.
func TestQuestionsTab(t *testing.T) {
	core := questionsWith()
	v, _, _ := questionsScreen(t, core)
	v.refresh()
	if !popupSays(v.list, noQuestions) {
		t.Errorf("empty tab says %q", popupLabels(v.list))
	}
	core.setPending(askedQuestion("q1"))
	v.refresh()
	for _, want := range []string{"assistant asks · from Cursor", "What is your name?", "10:00 left",
		"Cursor may ask its user too: the first answer counts."} {
		if !popupSays(v.list, want) {
			t.Errorf("the list does not say %q; it says %q", want, popupLabels(v.list))
		}
	}
	if popupSays(v.list, noQuestions) {
		t.Error("the empty state shows beside a question")
	}
	test.Tap(v.rows[0].answer)
	if v.popups["q1"] == nil {
		t.Error("Answer… opened no popup")
	}
}

// A popup whose question closed leaves its window, hidden and emptied, to
// the next popup: no new window, nothing of the approval before it (its
// text, its Ctrl+Enter, its keys), and a second window closing while one
// is spare is closed.
func TestPopupWindowServesTheNextQuestion(t *testing.T) {
	approval := agent.Question{ID: "a1", Kind: agent.KindApproval, Agent: "scribe", Tool: "write_file", Principal: "client-1",
		Arguments: json.RawMessage(`{"path":"notes.txt","content":"hello"}`), AskedAt: askedAt, ExpiresAt: askedAt.Add(time.Minute)}
	choice, text := askedQuestion("c1"), askedQuestion("q1")
	choice.Choices = []string{"red", "blue"}
	choice.ConversationID, text.ConversationID = "", "" // nothing queued for fyne's goroutine but the closing
	core := questionsWith(approval, choice)
	v, ui, _ := questionsScreen(t, core)
	windows := func() int { return len(fyne.CurrentApp().Driver().AllWindows()) }
	before := windows()

	v.popup("a1")
	first := v.popups["a1"].win
	v.closed("a1")
	if v.spare != first {
		t.Fatal("the closed popup's window is not kept for the next")
	}
	core.setPending(choice, text)
	v.popup("c1")
	p := v.popups["c1"]
	if p.win != first || windows() != before+1 {
		t.Fatalf("the next popup has a window of its own (%d windows, %d before)", windows(), before)
	}
	if got := p.win.Title(); got != "Deskhand: assistant asks" {
		t.Errorf("window title %q", got)
	}
	if popupSays(p.win.Content(), "write_file") {
		t.Errorf("the approval's text shows in the next popup: %q", popupLabels(p.win.Content()))
	}
	p.win.Canvas().(fyne.Shortcutable).TypedShortcut(approveShortcut)
	if len(core.answers) != 0 {
		t.Fatalf("Ctrl+Enter in the next popup answered %v", core.answers)
	}

	// A text question while the choice is open gets a new window; when
	// both close, one is kept and the other closed.
	v.popup("q1")
	second := v.popups["q1"].win
	if second == first {
		t.Fatal("two open popups share a window")
	}
	v.closed("c1")
	if v.spare != first {
		t.Fatal("the choice's window is not the spare")
	}
	if v.spare.Canvas().OnTypedRune() != nil || v.spare.Canvas().OnTypedKey() != nil {
		t.Error("the spare window keeps the choice's keys")
	}
	v.closed("q1")
	if v.spare != first {
		t.Error("a second closed popup replaced the spare")
	}
	ui.waitQueued(1)
	ui.runQueued()
	if windows() != before+1 {
		t.Errorf("%d windows once both popups closed, want the spare beside the %d before", windows(), before)
	}
}
