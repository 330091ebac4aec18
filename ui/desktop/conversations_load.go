package desktop

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// listEvery is the least time between two reads of the conversations
// list while calls come in: under a burst of events the list is read at
// its start and once more at the end of each window (the trailing read
// shows the last change), however many events came. A lone change still
// shows at once; under a stream of calls the rows move every two seconds,
// which a person can still follow, where once a second the list's redraws
// were a third of the window's frames under make load.
const listEvery = 2 * time.Second

// throttle runs a function at most once per window: at once when the last
// run is a window old, else once at the window's end, however often it is
// poked meanwhile. It lives on fyne's goroutine: poke, the timer's
// callback and run all run there.
type throttle struct {
	every time.Duration
	now   func() time.Time
	// after runs f on fyne's goroutine once d has passed (a timer; tests
	// drive it by hand).
	after func(d time.Duration, f func())
	run   func()
	last  time.Time
	due   bool // a run is scheduled at the window's end
}

// poke asks for a run.
func (t *throttle) poke() {
	if t.due {
		return
	}
	wait := t.every - t.now().Sub(t.last)
	if wait <= 0 {
		t.fire()
		return
	}
	t.due = true
	t.after(wait, func() {
		t.due = false
		t.fire()
	})
}

func (t *throttle) fire() {
	t.last = t.now()
	t.run()
}

// afterOnUI is the throttle's timer in the App: f runs on fyne's
// goroutine once d has passed, unless the App has closed by then. The
// timer's hook on the App's context goes when it fires: left there, each
// would stay until the App closes.
func (a *App) afterOnUI(d time.Duration, f func()) {
	hook := make(chan func() bool, 1)
	timer := time.AfterFunc(d, func() {
		(<-hook)()
		a.onUI(f)
	})
	hook <- context.AfterFunc(a.ctx, func() { timer.Stop() })
}

// listVisible tells whether the Conversations tab can be seen: its tab
// selected and the window not closed to the tray. While it cannot, the
// list is not read; it is read once when it can again.
func (v *conversationsView) listVisible() bool {
	return v.app.tabSeen(tabConversations)
}

// changed notes that the list may have changed (a turn started or ended,
// a question came or went): it is read within a window if the tab can be
// seen, else when it can again.
func (v *conversationsView) changed() {
	if !v.listVisible() {
		v.stale = true
		return
	}
	v.lister.poke()
}

// shown is called when the tab may have become visible: a list gone stale
// meanwhile is read once.
func (v *conversationsView) becameVisible() {
	if v.stale && v.listVisible() {
		v.stale = false
		v.lister.poke()
	}
}

// markWaiting marks the rows of the conversations with a question
// pending (the core holds them in memory), without reading the list. The
// rows are redrawn in place, only when the marks changed and no read of
// the list, which marks them too, is due: under load questions come and
// go by the dozen a second.
func (v *conversationsView) markWaiting() {
	waiting := make(map[string]bool)
	for _, q := range v.core.Questions.Pending() {
		waiting[q.ConversationID] = true
	}
	if maps.Equal(waiting, v.waiting) {
		return
	}
	v.waiting = waiting
	if v.listVisible() && !v.lister.due {
		v.follow()
	}
}

// markTurn shows at once, from the event, that a turn of a listed
// conversation ended: the row's state would otherwise wait for the
// list's next read, up to listEvery under a stream of calls, while the
// client has its answer. The rows are redrawn in place at most once per
// markEvery; a turn starting, and a conversation not listed yet, wait
// for that read.
func (v *conversationsView) markTurn(id string, status agent.TurnStatus, at time.Time) {
	mark := func(cs []agent.ConversationSummary) bool {
		i := rowOf(cs, id)
		if i < 0 {
			return false
		}
		cs[i].LastStatus = status
		if at.After(cs[i].UpdatedAt) {
			cs[i].UpdatedAt = at
		}
		return true
	}
	mark(v.all)
	if mark(v.shown) {
		v.marker.poke()
	}
}

// markEvery is the least time between two redraws of the rows for turns
// marked from events: under load a hundred turns a second end (make load
// measured the window's share of CPU grow by a third at 250 ms), and a
// person reads a row's change within a second.
const markEvery = 500 * time.Millisecond

// drawnTurn is a turn drawn in the history: its ID, a fingerprint of
// what was drawn, and how many objects it took (its separator included).
type drawnTurn struct {
	id  string
	key uint64
	n   int
}

// turnKey fingerprints a turn as drawn, with the team members'
// conversations it called, so that a turn drawn again can be told
// unchanged.
func turnKey(t transcriptTurn, subs []subTranscript) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%v|%v|", t.Items, t.Summary, t.Failed)
	writeSubs(h, subs)
	return h.Sum64()
}

func writeSubs(h interface{ Write([]byte) (int, error) }, subs []subTranscript) {
	for _, s := range subs {
		fmt.Fprintf(h, "%s %v %v %v|", s.conv.ID, s.msgs, s.turns, s.qs)
		for _, t := range s.turns {
			writeSubs(h, s.nested[t.ID])
		}
	}
}

// turnPage is how many turns a transcript draws when it opens, and how
// many more "Show earlier turns" adds: a window's frame draws every
// widget in it, seen or scrolled away, so a conversation of a thousand
// turns drawn whole would slow every frame while it is open (issue 38).
// Ten turns fill the pane a few times over.
const turnPage = 10

// turnsDrawnMost bounds the turns drawn while someone follows the end of
// a conversation that keeps growing: beyond it, the oldest go, and the
// last page stays.
const turnsDrawnMost = 4 * turnPage

// renderHistory brings the drawn history in step with the stored
// transcript, drawing its turns from v.from (the last page when it
// opens): the turns drawn first that are unchanged stay as they are;
// from the first that changed (a question answered, a running turn ended,
// a member's conversation added) or is new, the turns are drawn anew,
// so that a turn ending in a long conversation draws that turn alone.
func (v *conversationsView) renderHistory() {
	sp := v.speakers()
	switch stored := len(v.turns); {
	case v.placeholder || v.from > stored:
		v.from = firstDrawn(-1, stored)
	case stored-v.from > turnsDrawnMost && v.atBottom():
		v.from, v.drawn = stored-turnPage, nil // the oldest drawn go: all is drawn anew
	}
	v.showEarlier()
	views := turnViews(v.msgs, v.turns[v.from:], v.qs, sp, v.liveID)
	keep, at := 0, 0 // the turns drawn that stay, and their objects
	for !v.placeholder && keep < min(len(views), len(v.drawn)) {
		d := v.drawn[keep]
		if d.id != views[keep].ID || d.key != turnKey(views[keep], v.subs[d.id]) {
			break
		}
		at += d.n
		keep++
	}
	if !v.placeholder && keep == len(v.drawn) && keep == len(views) {
		return
	}
	v.redrawn += len(v.drawn) - keep
	v.drawn = v.drawn[:keep]
	var objs []fyne.CanvasObject
	for i := keep; i < len(views); i++ {
		turn := v.turnObjects(views[i], sp, i > 0)
		objs = append(objs, turn...)
		v.drawn = append(v.drawn, drawnTurn{id: views[i].ID, key: turnKey(views[i], v.subs[views[i].ID]), n: len(turn)})
	}
	v.placeholder = len(views) == 0 && v.liveID == ""
	if v.placeholder {
		objs = append(objs, emptyConversation())
	}
	// The history is laid out again without refreshing the turns kept (a
	// container's Refresh would redraw every one of them); the window's
	// next frame fits the scroll to the new size.
	h := v.history
	clear(h.Objects[at:])
	h.Objects = append(h.Objects[:at], objs...)
	h.Layout.Layout(h.Objects, h.Size())
	canvas.Refresh(h)
}

// showEarlier shows, above the turns drawn, how many earlier ones are not.
func (v *conversationsView) showEarlier() {
	if v.from == 0 {
		if v.earlier.Visible() {
			v.earlier.Hide()
		}
		return
	}
	text := fmt.Sprintf("Show earlier turns (%s not shown)", countOf(v.from, "turn"))
	if v.earlier.Text != text {
		v.earlier.SetText(text)
	}
	if !v.earlier.Visible() {
		v.earlier.Show()
	}
}

// firstDrawn is the first of n stored turns to draw: from, or the last
// page's first when from is -1 (the conversation opens).
func firstDrawn(from, n int) int {
	if from < 0 || from > n {
		return max(0, n-turnPage)
	}
	return from
}

// drawEarlier draws a page of earlier turns above those drawn, once the
// team members' conversations they called are read. The scroll stays at
// the top, where the new page begins.
func (v *conversationsView) drawEarlier() {
	id, opened := v.current, v.opened
	from := max(0, v.from-turnPage)
	turns := v.turns[from:v.from]
	v.app.background(func(ctx context.Context) func() {
		subs, err := readSubTranscripts(ctx, v.core, turns, maxNesting)
		return func() {
			if opened != v.opened || id != v.current || v.placeholder {
				return
			}
			if err != nil {
				v.say(agent.UserMessage(err), true)
				return
			}
			if v.subs == nil {
				v.subs = subs
			}
			maps.Copy(v.subs, subs)
			v.from, v.drawn = from, nil
			v.renderHistory()
		}
	})
}

// turnObjects are a turn's widgets in the history, after a separator
// unless it is the first.
func (v *conversationsView) turnObjects(t transcriptTurn, sp speakers, separated bool) []fyne.CanvasObject {
	var objs []fyne.CanvasObject
	if separated {
		objs = append(objs, widget.NewSeparator())
	}
	objs = append(objs, turnWidgets(t)...)
	return append(objs, v.nestedWidgets(v.subs[t.ID], sp.Agent)...)
}

// endedTurns are the IDs of the turns that ended.
func endedTurns(turns []agent.Turn) map[string]bool {
	out := make(map[string]bool, len(turns))
	for _, t := range turns {
		if t.Status != agent.TurnRunning {
			out[t.ID] = true
		}
	}
	return out
}

// newTurns are the turns not among known.
func newTurns(turns []agent.Turn, known map[string]bool) []agent.Turn {
	var out []agent.Turn
	for _, t := range turns {
		if !known[t.ID] {
			out = append(out, t)
		}
	}
	return out
}

// keptSubs are the members' conversations of the known turns, kept from
// the last read, with those just read of the others.
func keptSubs(kept map[string][]subTranscript, known map[string]bool, read map[string][]subTranscript) map[string][]subTranscript {
	var out map[string][]subTranscript
	for id, s := range kept {
		if known[id] {
			if out == nil {
				out = map[string][]subTranscript{}
			}
			out[id] = s
		}
	}
	for id, s := range read {
		if out == nil {
			out = map[string][]subTranscript{}
		}
		out[id] = s
	}
	return out
}
