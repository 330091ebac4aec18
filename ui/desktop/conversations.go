package desktop

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// conversationsShown bounds the list.
const conversationsShown = 200

// conversationsView lists conversations, live, and shows one's transcript
// with what its running turn has done so far and writes right now. The
// open conversation's row is marked wherever it moves (not by the list's
// selection: see follow).
type conversationsView struct {
	app     *App
	core    Core
	list    *widget.List
	search  *widget.Entry
	all     []agent.ConversationSummary
	shown   []agent.ConversationSummary
	found   fullTextSearch  // the search of every message (search.go)
	clients []agent.Client  // to name principals
	waiting map[string]bool // conversations with a question pending
	now     func() time.Time

	current string // the conversation in the transcript
	// conv is its record, which names its agent and client: its row's at
	// first, then as read with the transcript (the list holds only the
	// recent ones, and the Log tab or a search opens older ones).
	conv agent.Conversation
	// Its stored transcript, read when it opens and when a turn ends.
	msgs  []agent.Message
	turns []agent.Turn
	qs    []agent.Question
	subs  map[string][]subTranscript // team members' conversations, by the turn that called them
	// The running turn shown live: its ID, the user's message from its
	// start event, and how many messages of it are drawn.
	liveID, liveAsked string
	liveDrawn         int
	syncing           bool // an update of the live turn is queued

	header     *widget.Label
	history    *fyne.Container // the stored turns
	live       *fyne.Container // the running turn's messages so far
	writer     *widget.Label   // who writes: the agent
	writing    *widget.Label   // what the model writes now
	words      *fyne.Container // writer and writing
	liveNote   *widget.Label   // what the running turn does, ≈ tokens
	asking     *fyne.Container // the questions waiting in this conversation
	scroll     *container.Scroll
	transcript *fyne.Container // history, live, asking
	foundCount *widget.Label   // how many a search found
	status     *widget.Label
	stop       *widget.Button // enabled while a turn runs here

	selected int // the row marked open, -1 for none
	// rows are the row widgets the list has bound and the row each shows,
	// for a read that changes rows but not their number to redraw them in
	// place: List.Refresh builds a row to measure, lays out every row
	// and frees every texture of the list.
	rows map[fyne.CanvasObject]widget.ListItemID

	listing, again bool // a list read in flight; another asked meanwhile
	listed, opened int  // count the reads, so only the latest is shown

	// Under load (conversations_load.go): the list is read at most once
	// per window while events come, and not while the tab cannot be seen
	// (stale: read it when it can); the history draws again only the
	// turns from the first that changed or is new (redrawn counts the
	// turns drawn again, having changed).
	lister *throttle
	stale  bool
	marker *throttle // redraws the rows for turns marked from events
	// hiddenBySearch is the conversation open before a search left it
	// out, to open again when the search is cleared.
	hiddenBySearch string
	probed         map[string]string // the load probe's: each row's state logged last
	drawn          []drawnTurn
	placeholder    bool // the history shows a note, not turns
	redrawn        int
	// Only the stored turns from index from on are drawn (the last page
	// when it opens); earlier draws the others a page at a time.
	from    int
	earlier *widget.Button
}

func newConversationsView(app *App, core Core) *conversationsView {
	v := &conversationsView{app: app, core: core, search: widget.NewEntry(), now: time.Now,
		header:  widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		history: container.NewVBox(), live: container.NewVBox(), asking: container.NewVBox(),
		writer: speakerLabel(""), writing: widget.NewLabel(""), liveNote: widget.NewLabel(""), status: widget.NewLabel("")}
	v.header.Truncation = fyne.TextTruncateEllipsis
	v.writing.Wrapping, v.writing.Selectable = fyne.TextWrapWord, true
	v.liveNote.Importance = widget.LowImportance
	v.status.Wrapping = fyne.TextWrapWord
	v.liveNote.Hide()
	v.history.Add(emptyTranscript())
	v.words = saidBox(v.writer, v.writing)
	v.words.Hide()
	v.earlier = widget.NewButtonWithIcon("", theme.MoveUpIcon(), v.drawEarlier)
	v.earlier.Importance = widget.LowImportance
	v.earlier.Hide()
	v.transcript = container.NewVBox(v.earlier, v.history, v.live, v.words, v.liveNote, v.asking)
	v.scroll = container.NewVScroll(v.transcript)
	v.search.SetPlaceHolder("Search conversations")
	v.search.OnChanged = func(string) { v.filter() }
	v.foundCount = widget.NewLabel("")
	v.foundCount.Importance = widget.LowImportance
	v.list = widget.NewList(
		func() int { return len(v.shown) },
		newConversationRow,
		func(i widget.ListItemID, o fyne.CanvasObject) {
			v.rows[o] = i
			v.setRow(o, i)
		})
	v.lister = &throttle{every: listEvery, now: time.Now, after: app.afterOnUI, run: v.read}
	v.marker = &throttle{every: markEvery, now: time.Now, after: app.afterOnUI, run: v.follow}
	v.selected, v.rows = -1, make(map[fyne.CanvasObject]widget.ListItemID)
	v.list.OnSelected = func(i widget.ListItemID) {
		// A click or Space opens the row's conversation; the row marks
		// itself open, and the list keeps no selection to move.
		v.list.Unselect(i)
		if i < len(v.shown) && v.shown[i].ID != v.current {
			v.open(v.shown[i].ID)
		}
	}
	return v
}

func emptyTranscript() fyne.CanvasObject {
	l := widget.NewLabel("Pick a conversation to read it. Each call of an agent shows here as it happens.")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

func agentShownName(a agent.Agent) string {
	if a.Name != "" {
		return a.Name
	}
	return a.Slug
}

// newConversationRow is a list row: the title, then agent · client on
// the left and state and time on the right, which are never cut off,
// over the mark of the open conversation.
func newConversationRow() fyne.CanvasObject {
	title := widget.NewLabel("conversation")
	title.Truncation = fyne.TextTruncateEllipsis
	meta, state, when := widget.NewLabel("agent · client"), widget.NewLabel("state"), widget.NewLabel("Jan 2")
	meta.Truncation = fyne.TextTruncateEllipsis
	for _, l := range []*widget.Label{meta, state, when} {
		l.SizeName = theme.SizeNameCaptionText
	}
	when.Importance = widget.LowImportance
	// The second line sits close under the title, as part of it.
	lines := container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), title, container.NewBorder(nil, nil, nil, container.NewHBox(state, when), meta))
	return container.NewStack(newOpenMark(), lines)
}

// setRow shows row i in the row widget o.
func (v *conversationsView) setRow(o fyne.CanvasObject, i widget.ListItemID) {
	if i < len(v.shown) {
		c := v.shown[i]
		l := v.rowLine(c)
		setConversationRow(o, l, c.ID == v.current)
		v.probeRow(c.ID, l.State)
	}
}

func setConversationRow(o fyne.CanvasObject, l conversationLine, open bool) {
	o.(*fyne.Container).Objects[0].(*openMark).set(open)
	row := o.(*fyne.Container).Objects[1].(*fyne.Container)
	line := row.Objects[1].(*fyne.Container)
	right := line.Objects[1].(*fyne.Container)
	importance := widget.LowImportance
	switch {
	case l.Failed:
		importance = widget.DangerImportance
	case l.Waiting:
		importance = widget.WarningImportance
	}
	setLabel(row.Objects[0].(*widget.Label), l.Title, widget.MediumImportance)
	setLabel(line.Objects[0].(*widget.Label), l.Meta, widget.MediumImportance)
	setLabel(right.Objects[0].(*widget.Label), l.State, importance)
	setLabel(right.Objects[1].(*widget.Label), l.When, widget.LowImportance)
}

// setLabel shows text in a label, redrawing it only when it changed: the
// list sets every row shown at each read, and a redrawn label is shaped
// again.
func setLabel(l *widget.Label, text string, importance widget.Importance) {
	if l.Text == text && l.Importance == importance {
		return
	}
	l.Text, l.Importance = text, importance
	l.Refresh()
}

// openMark is the background of the open conversation's row, in the
// colour of a list's selection.
type openMark struct {
	widget.BaseWidget
	rect *canvas.Rectangle
}

func newOpenMark() *openMark {
	m := &openMark{rect: canvas.NewRectangle(color.Transparent)}
	m.ExtendBaseWidget(m)
	m.Hidden = true
	return m
}

// set shows or hides the mark, drawing only a change.
func (m *openMark) set(open bool) {
	switch {
	case open && !m.Visible():
		m.Show()
	case !open && m.Visible():
		m.Hide()
	}
}

func (m *openMark) CreateRenderer() fyne.WidgetRenderer {
	r := &openMarkRenderer{m: m}
	r.Refresh()
	return r
}

type openMarkRenderer struct{ m *openMark }

func (r *openMarkRenderer) Layout(size fyne.Size)        { r.m.rect.Resize(size) }
func (r *openMarkRenderer) MinSize() fyne.Size           { return fyne.Size{} }
func (r *openMarkRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.m.rect} }
func (r *openMarkRenderer) Destroy()                     {}

// Refresh takes the colour of the theme in force.
func (r *openMarkRenderer) Refresh() {
	r.m.rect.FillColor = r.m.Theme().Color(theme.ColorNameSelection, fyne.CurrentApp().Settings().ThemeVariant())
	r.m.rect.Refresh()
}

func (v *conversationsView) content() fyne.CanvasObject {
	// The search comes first in the focus order, then the list.
	top := container.NewBorder(nil, nil, nil, v.foundCount, v.search)
	left := container.New(layout.NewBorderLayout(top, nil, nil, nil), top, v.list)
	v.stop = widget.NewButtonWithIcon("Stop the running turn", theme.MediaStopIcon(), v.stopTurn)
	v.stop.Disable()
	copyIt := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		if v.current != "" {
			v.app.fy.Clipboard().SetContent(v.text())
			v.say("The transcript is copied.", false)
		}
	})
	bottom := container.NewBorder(nil, nil, nil, container.NewHBox(copyIt, v.stop), v.status)
	right := container.NewBorder(v.header, bottom, nil, nil, container.New(steadyWidth{transcriptWidth}, v.scroll))
	split := container.NewHSplit(left, right)
	split.Offset = 0.38
	return split
}

// transcriptWidth is the least width of the open transcript.
const transcriptWidth = 240

// steadyWidth lays its objects over its whole size and asks for a fixed
// least width: a scroller asks for its content's, and as a turn runs
// that moves (its note, a question's card), and fyne would lay out again
// the tab around it, with every tab's button, at each change.
type steadyWidth struct{ width float32 }

func (l steadyWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.Position{})
		o.Resize(size)
	}
}

func (l steadyWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	min := fyne.Size{Width: l.width}
	for _, o := range objs {
		min.Height = max(min.Height, o.MinSize().Height)
	}
	return min
}

func (v *conversationsView) stopTurn() {
	switch {
	case v.current == "":
		v.say("Pick a conversation first.", false)
	case !v.core.Conversations.CancelTurn(v.current):
		v.say("No turn is running in this conversation.", false)
	default:
		v.say("Stopping the turn…", false)
	}
}

// say puts feedback under the transcript, a failure in the error colour.
func (v *conversationsView) say(text string, failed bool) {
	v.status.Importance = failedOr(failed, widget.MediumImportance)
	v.status.SetText(text)
}

// agentOf finds an agent by its ID among those the Agents tab holds.
func (v *conversationsView) agentOf(id string) (agent.Agent, bool) {
	if v.app.agents == nil {
		return agent.Agent{}, false
	}
	for _, a := range v.app.agents.agents {
		if a.ID == id {
			return a, true
		}
	}
	return agent.Agent{}, false
}

// agentNameOf names an agent by its ID, for the list and the header.
func (v *conversationsView) agentNameOf(id string) string {
	if ag, ok := v.agentOf(id); ok {
		return agentShownName(ag)
	}
	return "(unknown agent)"
}

// refresh re-reads the list from the store now, whether the tab can be
// seen or not (at start, and when asked to); events go through changed,
// which reads it at most once per window.
func (v *conversationsView) refresh() {
	v.stale = false
	v.read()
}

// read reads the list off fyne's goroutine. Reads are coalesced: one in
// flight, and one more once it is done however many were asked for
// meanwhile; only the latest is shown.
func (v *conversationsView) read() {
	if v.listing {
		v.again = true
		return
	}
	v.listing = true
	v.listed++
	listed := v.listed
	v.app.background(func(ctx context.Context) func() {
		all, err := v.core.Conversations.Recent(ctx, conversationsShown)
		clients, pending := v.core.Clients.List(), v.core.Questions.Pending()
		return func() {
			v.listing = false
			if v.again {
				v.again = false
				defer v.read()
			}
			if listed != v.listed {
				return
			}
			if err != nil {
				v.say(agent.UserMessage(err), true)
				return
			}
			v.all, v.clients = all, clients
			v.waiting = make(map[string]bool)
			for _, q := range pending {
				v.waiting[q.ConversationID] = true
			}
			v.filter()
			v.setHeader()
			v.probeOpen()
		}
	})
}

// filter shows the conversations the search finds, the one open marked
// when it is among them. The list's scroll stays where the person left
// it.
func (v *conversationsView) filter() {
	v.searchEvery()
	shown := v.withHits(filterConversations(v.all, v.search.Text, func(id string) string {
		return v.app.agentSlug(id) + " " + v.agentNameOf(id)
	}))
	same := len(shown) == len(v.shown)
	v.shown = shown
	v.foundCount.SetText(foundText(v.search.Text, len(shown)))
	v.searched()
	if !same {
		v.selected = rowOf(shown, v.current)
		v.list.Refresh()
		return
	}
	v.follow()
}

// follow marks the row of the conversation shown, or none, redrawing the
// rows the list shows in place (only what changed in them). Not with
// List.Select, which would scroll the list to the row at every read and
// redraw every row.
func (v *conversationsView) follow() {
	v.selected = rowOf(v.shown, v.current)
	for o, i := range v.rows {
		v.setRow(o, i)
	}
}

// open shows a conversation: everything stored, read off fyne's
// goroutine, then what its running turn has done and writes.
func (v *conversationsView) open(id string) {
	if id != v.current {
		v.hiddenBySearch = ""
		v.show(id, widget.NewLabel("Reading the conversation…"))
		_, running := v.core.Conversations.LiveTurn(id) // in memory: Stop works while the rest is read
		v.stopEnabled(running)
		if v.selected >= 0 {
			v.list.ScrollTo(v.selected)
		}
	}
	v.load()
}

// show puts conversation id in the transcript pane ("" for none), its
// history the note given until it is read.
func (v *conversationsView) show(id string, note fyne.CanvasObject) {
	v.app.watch.conversation(id)
	v.current, v.msgs, v.turns, v.qs, v.subs = id, nil, nil, nil, nil
	v.conv = agent.Conversation{ID: id}
	if i := rowOf(v.all, id); i >= 0 {
		v.conv = v.all[i].Conversation
	}
	v.liveID, v.liveAsked, v.liveDrawn = "", "", 0
	v.history.Objects = []fyne.CanvasObject{note}
	v.history.Refresh()
	v.drawn, v.placeholder, v.from = nil, true, 0
	v.showEarlier()
	v.live.RemoveAll()
	v.asking.RemoveAll()
	v.words.Hide()
	v.liveNote.Hide()
	v.say("", false)
	v.stopEnabled(false)
	v.setHeader()
	v.follow()
}

// searched keeps the pane with the list: a conversation open that the
// search leaves out is put away (the pane shows none, as the list marks
// none) and comes back when the search is cleared or finds it (the words
// in older messages are found a moment later), unless another was opened
// meanwhile.
func (v *conversationsView) searched() {
	switch searching := strings.TrimSpace(v.search.Text) != ""; {
	case searching && v.current != "" && rowOf(v.shown, v.current) < 0:
		id := v.current
		v.show("", notFoundNote())
		v.hiddenBySearch = id
	case v.hiddenBySearch != "" && v.current == "" && (!searching || rowOf(v.shown, v.hiddenBySearch) >= 0):
		id := v.hiddenBySearch
		v.hiddenBySearch = ""
		v.open(id)
	}
}

func notFoundNote() fyne.CanvasObject {
	l := widget.NewLabel("The conversation you had open is not among those found. Pick one to read it; clear the search to go back to it.")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

// load reads the open conversation's stored transcript; the live turn is
// drawn once it is in.
func (v *conversationsView) load() {
	id := v.current
	v.opened++
	opened := v.opened
	// Only the turns to draw have their team members' conversations read:
	// the last page when it opens, else those from the first drawn. Of
	// those, the ones of turns already read and ended are kept.
	from := v.from
	if v.placeholder {
		from = -1
	}
	known, kept := endedTurns(v.turns[min(v.from, len(v.turns)):]), v.subs
	v.app.background(func(ctx context.Context) func() {
		conv, err := v.core.Conversations.Get(ctx, id)
		if errors.Is(err, agent.ErrNotFound) {
			err = nil // gone: its transcript says so, and its row names it
		}
		var (
			msgs  []agent.Message
			turns []agent.Turn
			qs    []agent.Question
		)
		if err == nil {
			msgs, turns, err = v.core.Conversations.Transcript(ctx, id)
		}
		if err == nil {
			qs, err = v.core.Conversations.Questions(ctx, id)
		}
		var subs map[string][]subTranscript
		if err == nil {
			subs, err = readSubTranscripts(ctx, v.core, newTurns(turns[firstDrawn(from, len(turns)):], known), maxNesting)
		}
		return func() {
			if opened != v.opened || id != v.current {
				return
			}
			if err != nil {
				v.say(agent.UserMessage(err), true)
				return
			}
			if conv.ID != "" {
				v.conv = conv
				v.setHeader()
			}
			v.msgs, v.turns, v.qs, v.subs = msgs, turns, qs, keptSubs(kept, known, subs)
			v.liveID, v.liveDrawn = "", 0 // drawn again, after the history
			v.syncLive(true)
			v.renderHistory()
			v.drawAsking()
			v.toBottom()
		}
	})
}

// setHeader names the open conversation above its transcript, shaping
// the header again only when its text changes.
func (v *conversationsView) setHeader() {
	text := ""
	if c := v.conv; c.ID == v.current && c.AgentID != "" {
		text = c.Title + " · " + v.agentNameOf(c.AgentID) + " · " + clientName(c.Principal, v.clients)
	}
	setLabel(v.header, text, v.header.Importance)
}

// speakers names who talks in the open conversation.
func (v *conversationsView) speakers() speakers {
	if c := v.conv; c.ID == v.current && c.AgentID != "" {
		ag, found := v.agentOf(c.AgentID)
		return speakersOf(c.Principal, v.clients, ag, found)
	}
	return speakersOf(agent.LocalPrincipal, nil, agent.Agent{}, false)
}

func emptyConversation() fyne.CanvasObject {
	l := widget.NewLabel("Nothing was said in this conversation yet.")
	l.Importance = widget.LowImportance
	return l
}

// syncLive brings the running turn up to date from the core's snapshot
// (in memory): a new piece of text changes only the text being written;
// a round or tool call done redraws the running turn, not the rest. When
// no turn runs, what was drawn stays until the stored transcript is read
// again (final), so that nothing flickers away.
func (v *conversationsView) syncLive(final bool) {
	lt, ok := v.core.Conversations.LiveTurn(v.current)
	if ok && final && v.recorded(lt.TurnID) {
		ok = false // its end is stored: the history shows it all
	}
	v.stopEnabled(ok)
	if !ok {
		if final {
			v.live.RemoveAll()
			v.words.Hide()
			v.liveNote.Hide()
			v.liveID, v.liveDrawn = "", 0
		}
		return
	}
	atBottom := v.atBottom()
	if lt.TurnID != v.liveID || len(lt.Messages) != v.liveDrawn {
		newTurn := lt.TurnID != v.liveID
		v.liveID, v.liveDrawn = lt.TurnID, len(lt.Messages)
		objs := turnWidgets(liveView(lt, v.msgs, v.liveAsked, v.speakers()))
		if len(v.history.Objects) > 0 {
			objs = append([]fyne.CanvasObject{widget.NewSeparator()}, objs...)
		}
		v.live.Objects = objs
		v.live.Refresh()
		if newTurn {
			v.renderHistory() // without the turn now shown live
			v.writer.SetText(v.speakers().Agent)
		}
	}
	// Only what changed is refreshed: a container's Refresh would redraw
	// every message in it.
	if v.writing.Text != lt.Writing {
		v.writing.SetText(lt.Writing)
	}
	if show := lt.Writing != ""; show != v.words.Visible() {
		if show {
			v.words.Show()
		} else {
			v.words.Hide()
		}
	}
	if note := liveSummary(lt); v.liveNote.Text != note {
		v.liveNote.SetText(note)
	}
	if !v.liveNote.Visible() {
		v.liveNote.Show()
	}
	if atBottom {
		v.toBottom()
	}
}

// stopEnabled enables the stop button while a turn runs here; a button
// is refreshed only when this changes, not on every piece of text.
func (v *conversationsView) stopEnabled(on bool) {
	if v.stop == nil || on != v.stop.Disabled() {
		return
	}
	if on {
		v.stop.Enable()
	} else {
		v.stop.Disable()
	}
}

// recorded tells whether the stored transcript has the turn's end.
func (v *conversationsView) recorded(turnID string) bool {
	for _, t := range v.turns {
		if t.ID == turnID {
			return t.Status != agent.TurnRunning
		}
	}
	return false
}

// toBottom scrolls the transcript to its end, unless it shows its end
// already: a scroll refreshes the scroller, and fyne then frees the
// texture of every message in it, to draw them all again. An offset
// past the end (kept from a longer transcript) is no end: it shows
// nothing.
func (v *conversationsView) toBottom() {
	min := v.transcript.MinSize()
	end := max(0, min.Height-v.scroll.Size().Height)
	if off := v.scroll.Offset.Y; off >= end && off <= end+1 {
		return
	}
	// The scroller goes as far as the transcript's size, which grows to
	// its new minimum only at the next frame: it is grown now, or the
	// scroll would stop short by what was just added.
	if size := v.transcript.Size(); size.Height < min.Height {
		v.transcript.Resize(fyne.NewSize(max(size.Width, min.Width, v.scroll.Size().Width), min.Height))
	}
	v.scroll.ScrollToBottom()
}

// atBottom tells whether the transcript is scrolled to its end, so that
// new text keeps it there without pulling back someone reading above.
func (v *conversationsView) atBottom() bool {
	return v.scroll.Offset.Y >= v.transcript.Size().Height-v.scroll.Size().Height-theme.Padding()*4
}

// drawAsking shows the questions waiting in the open conversation, who
// is asked, and a way to answer.
func (v *conversationsView) drawAsking() {
	var objs []fyne.CanvasObject
	for _, q := range v.core.Questions.Pending() {
		if q.ConversationID != v.current || v.current == "" {
			continue
		}
		ag, found := v.agentBySlug(q.Agent)
		title, who := waitingLine(q, ag, found)
		t := widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		t.Wrapping, t.Importance = fyne.TextWrapWord, widget.WarningImportance
		w := widget.NewLabel(who)
		w.Wrapping = fyne.TextWrapWord
		id := q.ID
		answer := widget.NewButtonWithIcon("Answer…", theme.MailReplyIcon(), func() {
			if v.app.questions != nil {
				v.app.questions.popup(id)
			}
		})
		answer.Importance = widget.HighImportance
		objs = append(objs, widget.NewCard("", "", container.NewBorder(nil, nil, nil, container.NewVBox(answer), container.NewVBox(t, w))))
	}
	v.asking.Objects = objs
	v.asking.Refresh()
}

func (v *conversationsView) agentBySlug(slug string) (agent.Agent, bool) {
	if v.app.agents == nil {
		return agent.Agent{}, false
	}
	for _, a := range v.app.agents.agents {
		if a.Slug == slug {
			return a, true
		}
	}
	return agent.Agent{}, false
}

// text is the open conversation as plain text, the running turn too.
func (v *conversationsView) text() string {
	turns := turnViews(v.msgs, v.turns, v.qs, v.speakers(), v.liveID)
	if lt, ok := v.core.Conversations.LiveTurn(v.current); ok && lt.TurnID == v.liveID {
		t := liveView(lt, v.msgs, v.liveAsked, v.speakers())
		if lt.Writing != "" {
			t.Items = append(t.Items, transcriptItem{Kind: itemMessage, Who: v.speakers().Agent, Text: lt.Writing})
		}
		t.Summary = liveSummary(lt)
		turns = append(turns, t)
	}
	return transcriptText(turns)
}

// event follows the core: the list on every turn and question, the open
// transcript as its turn runs.
func (v *conversationsView) event(e agent.Event) {
	mine := e.Conversation != "" && e.Conversation == v.current
	switch e.Kind {
	case agent.EventTurnStarted:
		v.changed()
		if mine {
			v.liveAsked = e.Text
			v.syncLive(false)
		}
	case agent.EventTurnEnded:
		v.changed()
		v.markTurn(e.Conversation, e.Status, e.Time)
		if mine {
			v.load()
		}
	case agent.EventQuestionAsked, agent.EventQuestionClosed:
		v.markWaiting() // at once, from memory
		v.changed()
		if mine {
			v.drawAsking()
			if e.Kind == agent.EventQuestionAsked {
				v.toBottom() // the question is what matters now
			}
		}
	case agent.EventDelta, agent.EventModelCall, agent.EventToolCall:
		if mine && !v.syncing {
			// One update for a burst: the events already queued behind this
			// one run first, and the snapshot then has all their text.
			v.syncing = true
			v.app.onUI(func() {
				v.syncing = false
				v.syncLive(false)
			})
		}
	}
}

// foundText says how many conversations a search shows; nothing without
// one.
func foundText(search string, n int) string {
	if strings.TrimSpace(search) == "" {
		return ""
	}
	return fmt.Sprintf("%d found", n)
}
