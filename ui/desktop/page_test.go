package desktop

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
)

// counted is a tab's content that counts how often it is measured and
// refreshed.
type counted struct {
	*canvas.Rectangle
	measures, refreshes int
	// themed hears of refreshes made off the test's goroutine (fyne's
	// test driver applies a theme on its own).
	themed chan struct{}
}

func (c *counted) MinSize() fyne.Size {
	c.measures++
	return c.Rectangle.MinSize()
}

func (c *counted) Refresh() {
	if c.themed != nil {
		select {
		case c.themed <- struct{}{}:
		default:
		}
		return
	}
	c.refreshes++
	c.Rectangle.Refresh()
}

func newCounted(w, h float32) *counted {
	r := canvas.NewRectangle(nil)
	r.SetMinSize(fyne.NewSize(w, h))
	return &counted{Rectangle: r}
}

func TestHiddenPageIsSpared(t *testing.T) {
	test.NewTempApp(t)
	shown, hidden := newCounted(100, 50), newCounted(300, 200)
	tabs := container.NewAppTabs(container.NewTabItem("Shown", newPage(shown)), container.NewTabItem("Hidden", newPage(hidden)))
	test.NewTempWindow(t, tabs)

	hidden.measures, shown.measures = 0, 0
	for range 10 {
		tabs.MinSize()
	}
	if hidden.measures > 0 {
		t.Errorf("the hidden tab's content was measured %d times in 10 measures of the tabs, want none", hidden.measures)
	}
	if shown.measures < 10 {
		t.Errorf("the shown tab's content was measured %d times in 10 measures of the tabs, want every time", shown.measures)
	}
	// The hidden tab's size still counts: switching tabs must not
	// shrink the window.
	if got := tabs.MinSize(); got.Width < 300 || got.Height < 200 {
		t.Errorf("the tabs' minimum size is %v, smaller than the hidden tab's 300×200", got)
	}

	// fyne refreshes every tab's content when a title changes: the
	// shown views refresh what they change themselves, and a hidden one
	// is refreshed once it shows.
	hidden.refreshes, shown.refreshes = 0, 0
	for range 3 {
		tabs.Items[0].Text += "!"
		tabs.Refresh()
	}
	if hidden.refreshes > 0 || shown.refreshes > 0 {
		t.Errorf("3 titles changed: the tabs' content refreshed %d times (hidden) and %d times (shown), want none", hidden.refreshes, shown.refreshes)
	}
	// A tab shown again is refreshed once and measured afresh: what
	// changed while it was hidden counts once it shows.
	hidden.SetMinSize(fyne.NewSize(500, 400))
	tabs.SelectIndex(1)
	if hidden.refreshes != 1 {
		t.Errorf("the tab shown: its content refreshed %d times, want once", hidden.refreshes)
	}
	if got := tabs.MinSize(); got.Width < 500 || got.Height < 400 {
		t.Errorf("the tabs' minimum size is %v once the grown tab shows, want at least 500×400", got)
	}

	// A theme change reaches the shown tab's content (hidden's, selected
	// above) through fyne's walk of the window.
	hidden.themed = make(chan struct{}, 1)
	test.ApplyTheme(t, test.NewTheme())
	select {
	case <-hidden.themed:
	case <-time.After(5 * time.Second):
		t.Error("a theme change did not refresh the shown tab's content in 5 s")
	}
}
