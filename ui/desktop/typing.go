package desktop

import (
	"context"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// A question's popup takes the keyboard: while the person types in the
// window it waits, or the rest of their words would become the answer.
const (
	// typingQuiet is how long after the last change a person is taken to
	// have stopped typing.
	typingQuiet = 2 * time.Second
	// typingEvery is how often the focused field is looked at while the
	// app is in front.
	typingEvery = 200 * time.Millisecond
)

// typingWatch tells whether the person is typing in the window. Fields
// have no hook for every key, so the text of the focused one is sampled;
// only fyne's goroutine touches it.
type typingWatch struct {
	field fyne.Focusable
	text  string
	last  time.Time // when the focused field's text last changed
}

// sample looks at the focused field at now: a change of its text since
// the last look is typing; a field just focused is not.
func (w *typingWatch) sample(focused fyne.Focusable, now time.Time) {
	text, ok := fieldText(focused)
	switch {
	case !ok:
		w.field = nil
	case focused != w.field:
		w.field, w.text = focused, text
	case text != w.text:
		w.text, w.last = text, now
	}
}

// quietAt is when the person will have stopped typing if they type no
// more; it is in the past when they are not typing.
func (w *typingWatch) quietAt() time.Time { return w.last.Add(typingQuiet) }

// fieldText is the text of a field one types in.
func fieldText(f fyne.Focusable) (string, bool) {
	switch e := f.(type) {
	case *widget.Entry:
		return e.Text, true
	case *editorEntry:
		return e.Text, true
	case *sendEntry:
		return e.Text, true
	}
	return "", false
}

// sampleTyping looks at the window's focused field; on fyne's goroutine.
func (a *App) sampleTyping() { a.typing.sample(a.win.Canvas().Focused(), a.questions.now()) }

// watchTyping samples the focused field while the app is in front (from
// fyne's lifecycle), and not at all behind other windows.
func (a *App) watchTyping(inFront bool) {
	a.mu.Lock()
	stop := a.stopTyping
	a.stopTyping = nil
	a.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !inFront {
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	a.mu.Lock()
	a.stopTyping = cancel
	a.mu.Unlock()
	a.goStart(func() {
		tick := time.NewTicker(typingEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				a.onUI(a.sampleTyping)
			}
		}
	})
}

// openWhenNotTyping opens a waiting question's popup, unless the person
// is typing in the window: it would take their keys, so it waits until
// they stop (the Questions tab, the tray and the notification show it
// meanwhile).
func (a *App) openWhenNotTyping(id string) {
	if _, ok := a.questions.waiting(id); !ok {
		return // answered meanwhile
	}
	a.sampleTyping()
	if wait := a.typing.quietAt().Sub(a.questions.now()); wait > 0 {
		a.questions.after(wait, func() { a.openWhenNotTyping(id) })
		return
	}
	a.questions.popup(id)
}
