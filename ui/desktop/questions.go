package desktop

import (
	"context"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// questionsView lists the questions waiting and keeps a popup open for
// each; a popup closes by itself when someone else answers first.
type questionsView struct {
	app     *App
	core    Core
	pending []agent.Question
	popups  map[string]*popup
	// spare is the window of a popup whose question closed, hidden and
	// empty, for the next popup: a new window costs a GL context and a
	// first paint (about 0.15 s of CPU with Xvfb's software GL), and an
	// agent's questions often come one after another.
	spare  fyne.Window
	rows   []questionRow
	list   *fyne.Container // the rows, or the empty state
	scroll *container.Scroll
	empty  fyne.CanvasObject
	stale  bool // the rows were not drawn for the questions last read

	// now and ticker are the countdowns' clock: time.Now and a ticker
	// of a second, which tests replace.
	now    func() time.Time
	ticker func() (ticks <-chan time.Time, stop func())
	// after runs f on fyne's goroutine once d has passed (App.afterOnUI;
	// tests run it by hand).
	after func(d time.Duration, f func())
}

// questionRow is a question's line in the Questions tab.
type questionRow struct {
	q      agent.Question
	left   *widget.Label
	answer *widget.Button
}

const noQuestions = "No questions waiting. When an agent asks you something, it shows here and in a popup."

func newQuestionsView(app *App, core Core) *questionsView {
	v := &questionsView{app: app, core: core, popups: make(map[string]*popup), now: time.Now, after: app.afterOnUI,
		ticker: func() (<-chan time.Time, func()) {
			t := time.NewTicker(time.Second)
			return t.C, t.Stop
		}}
	empty := widget.NewLabel(noQuestions)
	empty.Wrapping = fyne.TextWrapWord
	v.empty = empty
	v.list = container.NewVBox(v.empty)
	intro := widget.NewLabel("Questions and approvals your agents are waiting on. Each one also opens in a window of its own: answer in either.")
	intro.Wrapping = fyne.TextWrapWord
	v.scroll = container.NewVScroll(container.NewVBox(intro, widget.NewSeparator(), v.list))
	return v
}

// visible tells whether the Questions tab can be seen.
func (v *questionsView) visible() bool {
	return v.app.tabSeen(tabQuestions)
}

// becameVisible draws the rows of questions that came and went unseen.
func (v *questionsView) becameVisible() {
	if v != nil && v.stale && v.visible() {
		v.refresh()
	}
}

func (v *questionsView) content() fyne.CanvasObject {
	return v.scroll
}

// refresh lists the questions waiting. While the tab cannot be seen only
// the list is read; its rows are drawn once it can (under load questions
// a client answers at once come and go with every turn).
func (v *questionsView) refresh() {
	v.pending = v.core.Questions.Pending()
	if !v.visible() {
		v.stale = true
		return
	}
	v.stale = false
	v.rows = v.rows[:0]
	if len(v.pending) == 0 {
		v.list.Objects = []fyne.CanvasObject{v.empty}
		v.scroll.Refresh()
		return
	}
	clients, now := v.core.Clients.List(), v.now()
	var objs []fyne.CanvasObject
	for i, q := range v.pending {
		client := clientName(q.Principal, clients)
		ag, found := v.agent(q.Agent)
		title := widget.NewLabelWithStyle(questionTitle(q)+" · from "+client, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		what := q.Text
		if q.Kind == agent.KindApproval {
			_, what, _ = strings.Cut(approvalAction(q.Tool, q.Arguments), "\n") // the title names the tool
		}
		prompt := widget.NewLabel(clip(what, 3, 120))
		prompt.Wrapping = fyne.TextWrapWord
		who := widget.NewLabel(askedWho(q, ag, found, client))
		who.Wrapping = fyne.TextWrapWord
		row := questionRow{q: q, left: widget.NewLabel(expiresIn(q, now))}
		id := q.ID
		row.answer = widget.NewButton("Answer…", func() { v.popup(id) })
		row.answer.Importance = widget.HighImportance
		v.rows = append(v.rows, row)
		if i > 0 {
			objs = append(objs, widget.NewSeparator())
		}
		objs = append(objs, container.NewBorder(nil, nil, nil, container.NewVBox(row.answer, row.left),
			container.NewVBox(title, prompt, who)))
	}
	v.list.Objects = objs
	v.scroll.Refresh() // the scroll sizes its content anew
}

// agent finds the asking agent, for who else is asked.
func (v *questionsView) agent(slug string) (agent.Agent, bool) {
	for _, a := range v.core.Agents.List() {
		if a.Slug == slug {
			return a, true
		}
	}
	return agent.Agent{}, false
}

// tick moves every countdown on: the popups' and the list's.
func (v *questionsView) tick() {
	now := v.now()
	for _, p := range v.popups {
		p.tick(now)
	}
	for _, r := range v.rows {
		r.left.SetText(expiresIn(r.q, now))
	}
}

func (v *questionsView) openAll() {
	for _, q := range v.core.Questions.Pending() {
		v.popup(q.ID)
	}
}

// popup opens (or brings forward) the popup of a pending question.
func (v *questionsView) popup(id string) {
	if p, ok := v.popups[id]; ok {
		v.show(p)
		return
	}
	for _, q := range v.core.Questions.Pending() {
		if q.ID == id {
			p := v.newPopup(q)
			v.popups[id] = p
			v.show(p)
			v.app.probeShown(id)
			v.startCountdown(p)
			v.loadExchange(p)
			return
		}
	}
}

// show brings a popup forward with the keyboard on its answer, above the
// main window.
func (v *questionsView) show(p *popup) {
	p.win.Show()
	p.win.RequestFocus()
	p.win.Canvas().Focus(p.focus)
	keepAbove(p.win, v.app.log)
}

// startCountdown ticks the popup's countdown once a second until the
// popup closes or the App does.
func (v *questionsView) startCountdown(p *popup) {
	ticks, stop := v.ticker()
	v.app.goStart(func() {
		defer stop()
		for {
			select {
			case <-ticks:
				v.app.onUI(v.tick)
			case <-p.done:
				return
			case <-v.app.ctx.Done():
				return
			}
		}
	})
}

// loadExchange shows the conversation's last exchange in the popup, read
// off fyne's goroutine.
func (v *questionsView) loadExchange(p *popup) {
	q := p.q
	if q.ConversationID == "" {
		return
	}
	v.app.background(func(ctx context.Context) func() {
		msgs, _, err := v.core.Conversations.Transcript(ctx, q.ConversationID)
		if err != nil {
			v.app.log.Warn("read the conversation of a question", "question", q.ID, "err", err)
			return nil
		}
		text := lastExchange(msgs, q.AskedAt, q.Agent, p.client)
		return func() { p.setExchange(text) }
	})
}

// waiting is question id if it still waits for an answer. Under
// load a client often answers before fyne's goroutine comes to the
// question: then there is nothing to show.
func (v *questionsView) waiting(id string) (agent.Question, bool) {
	pending := v.core.Questions.Pending()
	if i := slices.IndexFunc(pending, func(q agent.Question) bool { return q.ID == id }); i >= 0 {
		return pending[i], true
	}
	return agent.Question{}, false
}

// listed tells whether the Questions tab lists question id.
func (v *questionsView) listed(id string) bool {
	return slices.ContainsFunc(v.pending, func(q agent.Question) bool { return q.ID == id })
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
