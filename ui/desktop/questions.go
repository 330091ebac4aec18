package desktop

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// questionsCore is what the Questions tab and the popups need of the core.
// Both calls work in memory (an answer wakes the waiting turn, which does
// the writing), so they run on fyne's goroutine.
type questionsCore interface {
	Pending() []agent.Question
	AnswerQuestion(id string, content map[string]any, declined bool) error
}

// questionsView lists the questions waiting and keeps a popup open for
// each; a popup closes by itself when someone else answers first.
type questionsView struct {
	app     *App
	core    questionsCore
	list    *widget.List
	pending []agent.Question
	popups  map[string]*popup
}

func newQuestionsView(app *App, core questionsCore) *questionsView {
	v := &questionsView{app: app, core: core, popups: make(map[string]*popup)}
	v.list = widget.NewList(
		func() int { return len(v.pending) },
		func() fyne.CanvasObject { return widget.NewLabel("question") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			q := v.pending[i]
			o.(*widget.Label).SetText(questionTitle(q) + ": " + q.Prompt())
		})
	v.list.OnSelected = func(i widget.ListItemID) {
		v.popup(v.pending[i].ID)
		v.list.UnselectAll()
	}
	return v
}

func (v *questionsView) content() fyne.CanvasObject {
	return container.NewBorder(widget.NewLabel("Questions your agents are waiting on (click one to answer):"), nil, nil, nil, v.list)
}

func (v *questionsView) refresh() {
	v.pending = v.core.Pending()
	v.list.Refresh()
}

func (v *questionsView) openAll() {
	for _, q := range v.core.Pending() {
		v.popup(q.ID)
	}
}

// popup opens (or brings forward) the popup of a pending question.
func (v *questionsView) popup(id string) {
	if p, ok := v.popups[id]; ok {
		p.win.Show()
		p.win.RequestFocus()
		return
	}
	for _, q := range v.core.Pending() {
		if q.ID == id {
			p := newPopup(v.app, v.core, q, func() { delete(v.popups, id) })
			v.popups[id] = p
			p.win.Show()
			return
		}
	}
}

// closed closes a question's popup: it was answered (here or by the
// client), declined, expired or cancelled. It reports whether one was open.
func (v *questionsView) closed(id string) bool {
	p, ok := v.popups[id]
	if ok {
		p.close()
	}
	return ok
}

// popup is one question's window.
type popup struct {
	win    fyne.Window
	q      agent.Question
	status *widget.Label
	onGone func()

	text, comment       *widget.Entry
	send, approve, deny *widget.Button
	decline             *widget.Button
	choices             []*widget.Button
}

func newPopup(app *App, core questionsCore, q agent.Question, onGone func()) *popup {
	p := &popup{win: app.fy.NewWindow(questionTitle(q)), q: q, status: widget.NewLabel(""), onGone: onGone}
	p.status.Wrapping = fyne.TextWrapWord
	prompt := widget.NewLabel(q.Prompt())
	prompt.Wrapping = fyne.TextWrapWord
	answer := func(content map[string]any, declined bool) {
		if err := core.AnswerQuestion(q.ID, content, declined); err != nil {
			p.status.SetText(agent.UserMessage(err))
		}
		// On success the core's question_closed event closes the popup.
	}
	var form fyne.CanvasObject
	switch {
	case q.Kind == agent.KindApproval:
		p.comment = widget.NewEntry()
		p.comment.SetPlaceHolder("optional comment for the agent")
		p.approve = widget.NewButton("Approve", func() { answer(map[string]any{"approve": true, "comment": p.comment.Text}, false) })
		p.approve.Importance = widget.HighImportance
		p.deny = widget.NewButton("Deny", func() { answer(map[string]any{"approve": false, "comment": p.comment.Text}, false) })
		form = container.NewVBox(p.comment, container.NewGridWithColumns(2, p.deny, p.approve))
	case len(q.Choices) > 0:
		var buttons []fyne.CanvasObject
		for _, c := range q.Choices {
			b := widget.NewButton(c, func() { answer(map[string]any{"answer": c}, false) })
			p.choices = append(p.choices, b)
			buttons = append(buttons, b)
		}
		form = container.NewVBox(buttons...)
	default:
		p.text = widget.NewMultiLineEntry()
		p.text.SetPlaceHolder("your answer")
		p.send = widget.NewButton("Send", func() { answer(map[string]any{"answer": p.text.Text}, false) })
		p.send.Importance = widget.HighImportance
		form = container.NewVBox(p.text, p.send)
	}
	p.decline = widget.NewButton("Decline to answer", func() { answer(nil, true) })
	decline := p.decline
	meta := widget.NewLabel(expiresIn(q, time.Now()))
	p.win.SetContent(container.NewVBox(prompt, form, decline, meta, p.status))
	p.win.Resize(fyne.NewSize(420, 240))
	p.win.SetOnClosed(func() { p.onGone() })
	return p
}

func (p *popup) close() {
	p.win.Close()
}
