package desktop

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

// sendEntryOnScreen is a sendEntry in a window of fyne's test driver,
// counting what it sends.
func sendEntryOnScreen(t *testing.T) (*sendEntry, *int) {
	t.Helper()
	e := newSendEntry()
	sent := 0
	e.onEnter = func() { sent++ }
	w := test.NewTempApp(t).NewWindow("entry")
	w.SetContent(e)
	w.Resize(fyne.NewSize(300, 200))
	w.Canvas().Focus(e)
	return e, &sent
}

var (
	keyReturn = &fyne.KeyEvent{Name: fyne.KeyReturn}
	keyShift  = &fyne.KeyEvent{Name: desktop.KeyShiftLeft}
)

func TestEnterSendsAndShiftEnterStartsANewLine(t *testing.T) {
	e, sent := sendEntryOnScreen(t)
	test.Type(e, "Ada")
	e.KeyDown(keyShift)
	e.TypedKey(keyReturn)
	e.KeyUp(keyShift)
	test.Type(e, "Lovelace")
	if e.Text != "Ada\nLovelace" || *sent != 0 {
		t.Fatalf("after Shift+Enter: text %q, sent %d times", e.Text, *sent)
	}
	e.TypedKey(keyReturn)
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnter}) // the keypad's
	if e.Text != "Ada\nLovelace" || *sent != 2 {
		t.Errorf("after Enter: text %q, sent %d times", e.Text, *sent)
	}
}

func TestEnterWithoutSendingStartsANewLine(t *testing.T) {
	e, _ := sendEntryOnScreen(t)
	e.onEnter = nil
	ctrl := 0
	e.onCtrlEnter = func() { ctrl++ }
	test.Type(e, "a")
	e.TypedKey(keyReturn)
	test.Type(e, "b")
	if e.Text != "a\nb" {
		t.Errorf("text %q, want a new line", e.Text)
	}
	e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl})
	e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierAlt})
	if ctrl != 1 {
		t.Errorf("Ctrl+Enter ran %d times, want 1 (and Alt+Enter not)", ctrl)
	}
}

func TestEscapeInASendEntry(t *testing.T) {
	e, sent := sendEntryOnScreen(t)
	escaped := false
	e.onEscape = func() { escaped = true }
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if !escaped || *sent != 0 {
		t.Errorf("Escape: escaped %v, sent %d", escaped, *sent)
	}
}

func TestKeyButtonHearsDigits(t *testing.T) {
	var got []rune
	tapped := 0
	b := newKeyButton("1. red", func() { tapped++ })
	b.onRune = func(r rune) { got = append(got, r) }
	w := test.NewTempApp(t).NewWindow("button")
	w.SetContent(b)
	w.Canvas().Focus(b)
	test.Type(b, "2")
	b.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if string(got) != "2" || tapped != 1 {
		t.Errorf("runes %q, tapped %d", string(got), tapped)
	}
}
