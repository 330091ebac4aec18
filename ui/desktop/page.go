package desktop

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// page holds a tab's content and spares the window work on it that
// shows nothing new. fyne's AppTabs measures every tab's content, shown
// or hidden, each time the window draws a change (the largest wins, so
// that switching tabs never shrinks the window), and refreshes every
// tab's content, each label in it shaped and painted again, whenever a
// title changes or a tab is selected. Under load, when the open view
// changes every second and the Questions tab's count every few, that was
// most of the window's work.
//
// A hidden page answers with the size measured when it last showed. A
// shown page passes no refresh down: the views refresh what they change
// themselves, and a theme change reaches the shown tab's objects through
// fyne's walk of the window (app.ApplyThemeTo). The hidden tabs are not
// in that walk: a refresh that reaches them through the tabs is kept
// for when they show.
type page struct {
	widget.BaseWidget
	content fyne.CanvasObject

	min      fyne.Size // the content's, measured while shown
	measured bool
	stale    bool // refreshed while hidden
}

func newPage(content fyne.CanvasObject) *page {
	p := &page{content: content}
	p.ExtendBaseWidget(p)
	return p
}

// Show shows the page without BaseWidget's refresh (AppTabs shows the
// selected tab's content at every layout): only a refresh kept while
// hidden is done.
func (p *page) Show() {
	if p.Visible() {
		return
	}
	p.Hidden = false
	if p.stale {
		p.stale = false
		p.content.Refresh()
	}
}

func (p *page) CreateRenderer() fyne.WidgetRenderer {
	return &pageRenderer{page: p, objects: []fyne.CanvasObject{p.content}}
}

type pageRenderer struct {
	page    *page
	objects []fyne.CanvasObject
}

func (r *pageRenderer) MinSize() fyne.Size {
	p := r.page
	if !p.measured || p.Visible() {
		p.min, p.measured = p.content.MinSize(), true
	}
	return p.min
}

func (r *pageRenderer) Layout(size fyne.Size) {
	r.page.content.Move(fyne.Position{})
	r.page.content.Resize(size)
}

func (r *pageRenderer) Refresh() {
	if !r.page.Visible() {
		r.page.stale = true
	}
}

func (r *pageRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *pageRenderer) Destroy() {}
