package desktop

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// sendEntry is a multi-line entry where Enter sends and Shift+Enter
// starts a new line, as in chat apps: fyne's multi-line Entry does the
// opposite (Enter is a new line; Shift+Enter submits). It tracks Shift
// itself (KeyDown/KeyUp) and lets the Entry insert the new line. Without
// onEnter, Enter starts a new line too; Ctrl+Enter runs onCtrlEnter.
type sendEntry struct {
	widget.Entry
	shift       bool
	onEnter     func()
	onCtrlEnter func()
	onEscape    func()
}

// AcceptsTab is false: Tab moves on to the buttons, as in a chat app.
func (e *sendEntry) AcceptsTab() bool { return false }

func newSendEntry() *sendEntry {
	e := &sendEntry{}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(3)
	e.ExtendBaseWidget(e)
	return e
}

func isShift(k *fyne.KeyEvent) bool {
	return k.Name == desktop.KeyShiftLeft || k.Name == desktop.KeyShiftRight
}

func (e *sendEntry) KeyDown(k *fyne.KeyEvent) {
	if isShift(k) {
		e.shift = true
	}
	e.Entry.KeyDown(k)
}

func (e *sendEntry) KeyUp(k *fyne.KeyEvent) {
	if isShift(k) {
		e.shift = false
	}
	e.Entry.KeyUp(k)
}

func (e *sendEntry) TypedKey(k *fyne.KeyEvent) {
	switch {
	case (k.Name == fyne.KeyReturn || k.Name == fyne.KeyEnter) && !e.shift && e.onEnter != nil:
		e.onEnter()
		return
	case k.Name == fyne.KeyEscape && e.onEscape != nil:
		e.onEscape()
		return
	}
	// OnSubmitted stays nil, so the Entry inserts a new line on (Shift+)Enter.
	e.Entry.TypedKey(k)
}

// TypedShortcut runs onCtrlEnter on Ctrl+Enter: while the entry has the
// focus, fyne hands shortcuts to it, not to the window's canvas.
func (e *sendEntry) TypedShortcut(s fyne.Shortcut) {
	if isCtrlEnter(s) && e.onCtrlEnter != nil {
		e.onCtrlEnter()
		return
	}
	e.Entry.TypedShortcut(s)
}

func isCtrlEnter(s fyne.Shortcut) bool {
	c, ok := s.(*desktop.CustomShortcut)
	return ok && c.Modifier == fyne.KeyModifierControl && (c.KeyName == fyne.KeyReturn || c.KeyName == fyne.KeyEnter)
}

// keyButton is a button that also hears typed characters while it has
// the focus (a plain Button ignores them): a choice popup focuses its
// first choice, and the digit keys still pick one.
type keyButton struct {
	widget.Button
	onRune   func(rune)
	onEscape func()
}

func newKeyButton(label string, tapped func()) *keyButton {
	b := &keyButton{}
	b.Text, b.OnTapped = label, tapped
	b.ExtendBaseWidget(b)
	return b
}

func (b *keyButton) TypedRune(r rune) {
	if b.onRune != nil {
		b.onRune(r)
	}
}

func (b *keyButton) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && b.onEscape != nil {
		b.onEscape()
		return
	}
	b.Button.TypedKey(k)
}
