package desktop

import (
	"image/color"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// editorEntry is an entry of the agent editor. A focused entry gets every
// shortcut typed in the window, and fyne's Entry drops those it does not
// know: this one hands them to the window (Ctrl+S, Ctrl+N, and those of
// the window around the tabs).
type editorEntry struct {
	widget.Entry
	// minRows: a multi-line entry grows with its text from this many rows,
	// so that it never needs to scroll inside the form (see wheelPass).
	minRows, rowsShown int
	// focused, when set, is told the entry got the focus (the form then
	// scrolls it into view: Tab may land below the fold).
	focused func()
}

// FocusGained tells the editor, which brings the entry into view.
func (e *editorEntry) FocusGained() {
	e.Entry.FocusGained()
	if e.focused != nil {
		e.focused()
	}
}

// AcceptsTab is false: Tab moves on to the next field, even from one of
// several lines (fyne's multi-line Entry would type a tab).
func (e *editorEntry) AcceptsTab() bool { return false }

func newEditorEntry() *editorEntry {
	e := &editorEntry{}
	e.ExtendBaseWidget(e)
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	return e
}

func newEditorMultiLine(minRows int) *editorEntry {
	e := &editorEntry{minRows: minRows}
	e.ExtendBaseWidget(e)
	e.MultiLine, e.Wrapping = true, fyne.TextWrapWord
	e.SetMinRowsVisible(minRows)
	return e
}

// TypedShortcut gives the window its shortcuts, the entry its own.
func (e *editorEntry) TypedShortcut(s fyne.Shortcut) {
	if !toWindow(e, s) {
		e.Entry.TypedShortcut(s)
	}
}

// Resize re-counts the rows the text needs at the new width.
func (e *editorEntry) Resize(size fyne.Size) {
	e.Entry.Resize(size)
	e.grow()
}

// grow shows all of a multi-line entry's text, up to maxGrowRows rows.
func (e *editorEntry) grow() {
	if !e.MultiLine || e.minRows == 0 {
		return
	}
	inner := e.Size().Width - 2*theme.InnerPadding()
	measure := func(s string) float32 {
		return fyne.MeasureText(s, theme.TextSize(), e.TextStyle).Width
	}
	rows := min(max(textRows(e.Text, inner, measure), e.minRows), maxGrowRows)
	if rows != e.rowsShown {
		e.rowsShown = rows
		e.SetMinRowsVisible(rows)
	}
}

// maxGrowRows bounds how tall an entry grows; beyond, it scrolls inside
// as it must (the cursor keys still reach all of the text).
const maxGrowRows = 40

// textRows estimates how many rows a text takes once wrapped at width (0:
// not laid out yet, one row a line).
func textRows(text string, width float32, measure func(string) float32) int {
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		n := 1
		if width > 0 {
			n = max(1, int(math.Ceil(float64(measure(line)/width))))
		}
		rows += n
	}
	return rows
}

// editorSelectEntry is the model picker: a SelectEntry that also hands
// the window its shortcuts.
type editorSelectEntry struct {
	widget.SelectEntry
	focused func()
}

// FocusGained tells the editor, which brings the entry into view.
func (e *editorSelectEntry) FocusGained() {
	e.SelectEntry.FocusGained()
	if e.focused != nil {
		e.focused()
	}
}

func newEditorSelectEntry() *editorSelectEntry {
	e := &editorSelectEntry{}
	e.ExtendBaseWidget(e)
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	return e
}

// TypedShortcut gives the window its shortcuts, the entry its own.
func (e *editorSelectEntry) TypedShortcut(s fyne.Shortcut) {
	if !toWindow(e, s) {
		e.SelectEntry.TypedShortcut(s)
	}
}

// entryKeys are the keys of the shortcuts fyne's Entry handles itself
// (moving and deleting by word, Home and End on macOS); its others are
// typed ones (copy, paste…), not desktop.CustomShortcut.
var entryKeys = map[fyne.KeyName]bool{fyne.KeyLeft: true, fyne.KeyRight: true, fyne.KeyUp: true, fyne.KeyDown: true,
	fyne.KeyBackspace: true, fyne.KeyDelete: true, fyne.KeyHome: true, fyne.KeyEnd: true}

// toWindow hands a shortcut an entry does not handle to its window's
// canvas, which runs the window's shortcuts; false when it is the entry's.
func toWindow(o fyne.CanvasObject, s fyne.Shortcut) bool {
	c, ok := s.(*desktop.CustomShortcut)
	if !ok || entryKeys[c.KeyName] {
		return false
	}
	window, ok := fyne.CurrentApp().Driver().CanvasForObject(o).(fyne.Shortcutable)
	if !ok {
		return false
	}
	window.TypedShortcut(s)
	return true
}

// isShortcut says whether s is the key with the platform's shortcut
// modifier (Ctrl, or Cmd on macOS).
func isShortcut(s fyne.Shortcut, key fyne.KeyName) bool {
	c, ok := s.(*desktop.CustomShortcut)
	return ok && c.KeyName == key && c.Modifier == fyne.KeyModifierShortcutDefault
}

// wheelPass lies over an entry and hands the mouse wheel to the form's
// scroll. Every fyne Entry that wraps or scrolls holds a scroll of its
// own, which takes the wheel over it even when it has nothing to scroll,
// so the form would stop under the pointer; the wheel goes to the
// deepest scrollable object under it, and this one is drawn last. It
// takes no tap, hover or drag: those reach the entry.
type wheelPass struct {
	widget.BaseWidget
	to fyne.Scrollable
}

func newWheelPass(to fyne.Scrollable) *wheelPass {
	w := &wheelPass{to: to}
	w.ExtendBaseWidget(w)
	return w
}

// Scrolled scrolls the form.
func (w *wheelPass) Scrolled(ev *fyne.ScrollEvent) {
	if w.to != nil {
		w.to.Scrolled(ev)
	}
}

func (w *wheelPass) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}

// underWheel puts a wheelPass to the scroll over an entry.
func underWheel(entry fyne.CanvasObject, to fyne.Scrollable) fyne.CanvasObject {
	return container.NewStack(entry, newWheelPass(to))
}
