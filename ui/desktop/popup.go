package desktop

import (
	"log/slog"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/desktop/platform"
)

// popup is one question's window: who asks and from where, the question
// or the exact action to approve, the conversation's last exchange, the
// answer, and what happens if nobody answers, counted down.
//
// Keys: a question's answer field has the focus, Enter sends and
// Shift+Enter starts a new line; a choice's first button has the focus
// and 1–9 choose; an approval's comment field has the focus, and only
// Ctrl+Enter (or the button) approves, so that an Enter meant for
// another window never approves an action unread. Escape, or closing
// the window, hides the popup: it lives (and counts down, for the
// Questions tab too) until the question closes, and Answer… in the tab
// shows it again as it was left.
type popup struct {
	win       fyne.Window
	q         agent.Question
	client    string
	status    *widget.Label
	countdown *widget.Label
	exchange  *widget.Label
	focus     fyne.Focusable
	done      chan struct{} // closed with the window: ends the countdown
	onGone    func()        // takes the popup off the view, its window back
	gone      bool          // closed (its window hidden, for the next popup or soon closed)

	text, comment       *sendEntry
	send, approve, deny *widget.Button
	decline             *widget.Button
	choices             []*keyButton
	remember            *rememberChooser // an approval's "Always allow…"
	body                *fyne.Container  // all of the above, in one column
}

func (v *questionsView) newPopup(q agent.Question) *popup {
	client := clientName(q.Principal, v.core.Clients.List())
	ag, found := v.agent(q.Agent)
	p := &popup{win: v.window(popupTitle(q)), q: q, client: client, done: make(chan struct{}),
		status: widget.NewLabel(""), countdown: widget.NewLabel(timeoutNote(q, client, v.now()))}
	p.onGone = func() {
		delete(v.popups, q.ID)
		v.release(p.win)
	}
	p.status.Wrapping, p.status.Importance = fyne.TextWrapWord, widget.DangerImportance
	p.countdown.Wrapping = fyne.TextWrapWord

	name := q.Agent
	if found {
		name = agentLabel(ag)
	}
	heading := name + " asks you:"
	what := widget.NewLabel(q.Text)
	if q.Kind == agent.KindApproval {
		heading = name + " asks to run a tool:"
		what = widget.NewLabelWithStyle(approvalAction(q.Tool, q.Arguments), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	}
	what.Wrapping = fyne.TextWrapWord
	from := widget.NewLabel("From " + client + ". " + askedWho(q, ag, found, client))
	from.Wrapping = fyne.TextWrapWord
	p.exchange = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	p.exchange.Wrapping = fyne.TextWrapWord
	p.exchange.Hide()
	p.status.Hide() // until there is something to say

	answer := func(content map[string]any, declined bool) {
		if err := v.core.Questions.Answer(q.ID, content, declined); err != nil {
			p.status.SetText(agent.UserMessage(err))
			p.status.Show()
		}
		// On success the core's question_closed event closes the popup.
	}
	hide := func() { p.win.Hide() }
	var form fyne.CanvasObject
	switch {
	case q.Kind == agent.KindApproval:
		p.comment = newSendEntry()
		p.comment.SetMinRowsVisible(2)
		p.comment.SetPlaceHolder("Optional: a comment for the agent")
		chooser := newRememberChooser(q, client) // "Always allow…", and the rules that exist
		chooser.showHistory(v.app, v.core, ag.ID, q.Tool, v.core.Clients.List())
		p.remember = chooser
		approve := func() { answer(chooser.content(answerText(p.comment.Text)), false) }
		p.approve = widget.NewButton("Approve", approve)
		p.approve.Importance = widget.HighImportance
		p.deny = widget.NewButton("Deny", func() { answer(map[string]any{"approve": false, "comment": answerText(p.comment.Text)}, false) })
		p.comment.onCtrlEnter, p.comment.onEscape = approve, hide
		p.win.Canvas().AddShortcut(approveShortcut, func(fyne.Shortcut) { approve() })
		p.focus = p.comment
		form = container.NewVBox(p.comment, chooser.box, container.NewGridWithColumns(2, p.deny, p.approve))
	case len(q.Choices) > 0:
		var buttons []fyne.CanvasObject
		choose := func(r rune) {
			if i := int(r - '1'); unicode.IsDigit(r) && i >= 0 && i < len(q.Choices) {
				answer(map[string]any{"answer": q.Choices[i]}, false)
			}
		}
		for i, c := range q.Choices {
			label := c
			if i < 9 {
				label = string(rune('1'+i)) + ". " + c
			}
			b := newKeyButton(label, func() { answer(map[string]any{"answer": c}, false) })
			b.onRune, b.onEscape = choose, hide
			p.choices = append(p.choices, b)
			buttons = append(buttons, b)
		}
		p.win.Canvas().SetOnTypedRune(choose)
		p.focus = p.choices[0]
		form = container.NewVBox(buttons...)
	default:
		p.text = newSendEntry()
		p.text.SetPlaceHolder("Your answer")
		send := func() { answer(map[string]any{"answer": answerText(p.text.Text)}, false) }
		p.text.onEnter, p.text.onCtrlEnter, p.text.onEscape = send, send, hide
		p.send = widget.NewButton("Send", send)
		p.send.Importance = widget.HighImportance
		p.focus = p.text
		form = container.NewVBox(p.text, p.send)
	}
	bottom := []fyne.CanvasObject{form}
	if q.Kind != agent.KindApproval { // Deny is an approval's way out
		p.decline = widget.NewButton("Decline to answer", func() { answer(nil, true) })
		bottom = append(bottom, p.decline)
	}
	hint := widget.NewLabel(keysHint(q) + " Escape hides this window; the question stays in the Questions tab.")
	hint.Wrapping, hint.Importance = fyne.TextWrapWord, widget.LowImportance
	bottom = append(bottom, p.status, p.countdown, hint)
	p.win.Canvas().SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			hide()
		}
	})

	// One column, scrolled when a long question or action needs it: who
	// asks, what, the context, then the answer and what happens without.
	all := append([]fyne.CanvasObject{widget.NewLabelWithStyle(heading, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		what, from, p.exchange, widget.NewSeparator()}, bottom...)
	p.body = container.NewVBox(all...)
	p.win.SetContent(container.NewVScroll(p.body))
	p.fit()
	p.win.CenterOnScreen()
	p.win.SetCloseIntercept(hide) // only the question's end closes it
	return p
}

// A popup is as wide as popupWidth and as tall as its content, up to
// popupMaxHeight (then it scrolls).
const popupWidth, popupMaxHeight = 480, 560

// fittedHeight is the height a window of this width needs to show body
// whole, at most limit: its wrapped text is laid out at that width first,
// as its height depends on it.
func fittedHeight(body fyne.CanvasObject, width, limit float32) float32 {
	inner := width - 2*theme.Padding()
	for range 2 { // the second pass measures the text wrapped by the first
		body.Resize(fyne.NewSize(inner, body.MinSize().Height))
	}
	return min(body.MinSize().Height+2*theme.Padding(), limit)
}

// approveShortcut approves from anywhere in an approval's popup.
var approveShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl}

// window is a new popup's window: the spare one when there is one.
func (v *questionsView) window(title string) fyne.Window {
	w := v.spare
	if w == nil {
		return v.app.fy.NewWindow(title)
	}
	v.spare = nil
	w.SetTitle(title)
	return w
}

// release takes back the hidden window of a popup that closed: emptied of
// the question's widgets and keys, it is the spare, or, when there is one
// already, it is closed a moment later (see popup.close).
func (v *questionsView) release(w fyne.Window) {
	if v.spare != nil {
		v.app.afterOnUI(popupCloseDelay, w.Close)
		return
	}
	c := w.Canvas()
	c.Unfocus()
	c.SetOnTypedRune(nil)
	c.SetOnTypedKey(nil)
	c.RemoveShortcut(approveShortcut)
	w.SetCloseIntercept(w.Hide)
	w.SetContent(widget.NewLabel(""))
	v.spare = w
}

// tick shows the time left.
func (p *popup) tick(now time.Time) {
	p.countdown.SetText(timeoutNote(p.q, p.client, now))
}

// setExchange shows the conversation's last exchange, when there is one.
func (p *popup) setExchange(text string) {
	if text == "" {
		return
	}
	p.exchange.SetText("Before this, in the conversation:\n" + text)
	p.exchange.Show()
	p.fit()
}

// fit sizes the window to what it says.
func (p *popup) fit() {
	p.win.Resize(fyne.NewSize(popupWidth, fittedHeight(p.body, popupWidth, popupMaxHeight)))
}

// close ends the popup: its window is hidden at once and kept for the
// next popup or closed a moment later, since fyne 2.7.1 crashes (a nil
// pointer in processMouseMoved) when a window already closing gets a
// mouse move that changes the cursor, as a popup answered from the client
// under the pointer did under load; a hidden window gets no mouse events.
func (p *popup) close() {
	if p.gone {
		return
	}
	p.gone = true
	p.win.Hide()
	close(p.done)
	p.onGone()
}

// popupCloseDelay is how long a popup's window stays hidden before it is
// closed.
const popupCloseDelay = time.Second

// keepAbove asks the window system to keep a window above the others,
// where fyne can name it (not on its test driver).
func keepAbove(w fyne.Window, log *slog.Logger) {
	nw, ok := w.(driver.NativeWindow)
	if !ok {
		return
	}
	nw.RunNative(func(ctx any) {
		var native platform.Window
		switch c := ctx.(type) {
		case driver.X11WindowContext:
			native.X11 = c.WindowHandle
		case driver.WindowsWindowContext:
			native.HWND = c.HWND
		default:
			return
		}
		if err := platform.KeepAbove(native); err != nil {
			log.Debug("keep a popup above the other windows", "err", err)
		}
	})
}
