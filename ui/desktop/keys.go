package desktop

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// The window's keyboard: its shortcuts live in the main menu, which fyne
// tries before the focused widget (a shortcut on the canvas alone does
// nothing while a text field has the focus), and the menu shows them.
//
//	Ctrl+1 … Ctrl+6  Agents, Questions, Conversations, Connect, Settings, Log
//	Ctrl+P           pause or resume serving
//	Ctrl+Q           quit Deskhand
//	Escape           close the topmost dialog (when no text field has the focus)

// shortcut is Ctrl (Cmd on macOS) with a key.
func shortcut(key fyne.KeyName) *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}
}

// tabKeys are the keys of the tabs, in their order.
var tabKeys = []fyne.KeyName{fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key5, fyne.Key6}

// setKeys gives the window its main menu with the shortcuts, and Escape.
func (a *App) setKeys() {
	a.pauseItem = fyne.NewMenuItem(pauseLabel(false), a.togglePause)
	a.pauseItem.Shortcut = shortcut(fyne.KeyP)
	quit := fyne.NewMenuItem("Quit Deskhand", a.quit)
	quit.Shortcut = shortcut(fyne.KeyQ)
	quit.IsQuit = true // fyne adds no Quit of its own
	var goTo []*fyne.MenuItem
	for i, tab := range a.tabs.Items {
		if i >= len(tabKeys) {
			break
		}
		item := fyne.NewMenuItem(tabName(tab), func() { a.tabs.SelectIndex(i) })
		item.Shortcut = shortcut(tabKeys[i])
		goTo = append(goTo, item)
	}
	a.mainMenu = fyne.NewMainMenu(
		fyne.NewMenu("Deskhand", a.pauseItem, fyne.NewMenuItemSeparator(), quit),
		fyne.NewMenu("View", goTo...),
	)
	a.win.SetMainMenu(a.mainMenu)
	a.win.Canvas().SetOnTypedKey(func(e *fyne.KeyEvent) {
		if e.Name == fyne.KeyEscape {
			a.closeTopDialog()
		}
	})
}

// tabName is a tab's title without the Questions tab's count.
func tabName(t *container.TabItem) string {
	name, _, _ := strings.Cut(t.Text, " (")
	return name
}

// showMenuState keeps the main menu's pause item in step.
func (a *App) showMenuState(paused bool) {
	if a.pauseItem == nil {
		return
	}
	if label := pauseLabel(paused); a.pauseItem.Label != label {
		a.pauseItem.Label = label
		a.mainMenu.Refresh()
	}
}

// showDialog shows a dialog of the main window that Escape closes as its
// Cancel would (its callback gets false). Dialogs shown otherwise are
// closed by Escape too, but without their callback.
func (a *App) showDialog(d dialog.Dialog, onClosed func()) {
	a.dialogs = append(a.dialogs, d)
	d.SetOnClosed(func() {
		a.dialogs = slices.DeleteFunc(a.dialogs, func(o dialog.Dialog) bool { return o == d })
		if onClosed != nil {
			onClosed()
		}
	})
	d.Show()
	// A focused widget (the field typed in before) would take the Escape
	// key; with none, it reaches the window, which closes the dialog.
	a.win.Canvas().Unfocus()
}

// closeTopDialog closes the topmost dialog of the main window; it reports
// whether there was one.
func (a *App) closeTopDialog() bool {
	if n := len(a.dialogs); n > 0 {
		a.dialogs[n-1].Hide() // its OnClosed drops it from the list
		return true
	}
	overlays := a.win.Canvas().Overlays()
	top := overlays.Top()
	if top == nil {
		return false
	}
	if p, ok := top.(*widget.PopUp); ok {
		p.Hide()
	} else {
		overlays.Remove(top)
	}
	return true
}
