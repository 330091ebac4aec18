package desktop

import (
	"context"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Under load, the events of every call's streamed text, model rounds and
// tool calls come by the thousand a second, and only those of the open
// conversation and of a "Try it" turn are drawn. They come on a
// subscription of their own, so that they cannot crowd the turns and
// questions out of a subscriber's buffer, and the core keeps the others
// from it: each event handed on wakes a goroutine.

// isStreamKind tells the kinds of events followStreams follows.
func isStreamKind(k agent.EventKind) bool {
	return k == agent.EventDelta || k == agent.EventModelCall || k == agent.EventToolCall
}

// watched is the conversation open in the Conversations tab and the turn
// "Try it" runs: set on fyne's goroutine, read by the core's publishers.
type watched struct {
	mu           sync.Mutex
	conv, trying string
}

func (w *watched) conversation(id string) {
	w.mu.Lock()
	w.conv = id
	w.mu.Unlock()
}

func (w *watched) turn(id string) {
	w.mu.Lock()
	w.trying = id
	w.mu.Unlock()
}

// wants tells whether an event concerns what is shown.
func (w *watched) wants(e agent.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return e.Conversation != "" && e.Conversation == w.conv || e.Turn != "" && e.Turn == w.trying
}

// followStreams hands fyne's goroutine the streamed events of what is
// shown until ctx ends. The handlers check that it is still shown.
func (a *App) followStreams(ctx context.Context) {
	var kinds []agent.EventKind
	for _, k := range followedKinds {
		if isStreamKind(k) {
			kinds = append(kinds, k)
		}
	}
	events := a.core.Events.SubscribeWhere(ctx, a.watch.wants, kinds...)
	a.goStart(func() { a.handOn(events, alwaysUrgent) })
}

// alwaysUrgent: the streams followed are all of what is shown.
func alwaysUrgent(agent.Event) bool { return true }

// batchMax bounds the events handed to fyne's goroutine in one function.
const batchMax = 64

// calmWait is how long an event that only feeds what is redrawn at most
// once a second or two (the status, the list) waits for others before it is
// handed on. Under load a hundred turns a second start and end, and each
// hand-on wakes fyne's goroutine, which runs on the locked main thread:
// a switch of threads each time.
const calmWait = 100 * time.Millisecond

// batches hands on the events as they come, each batch what was waiting
// at once (up to batchMax): one call to fyne's goroutine for a burst, not
// one per event. A batch of events that are not urgent waits up to
// calmWait (after) for more, and goes at once when an urgent one joins.
// It closes when events does.
func batches(events <-chan agent.Event, urgent func(agent.Event) bool, after func(time.Duration) <-chan time.Time) <-chan []agent.Event {
	out := make(chan []agent.Event)
	go func() {
		defer close(out)
		for e := range events {
			batch := []agent.Event{e}
			var calm <-chan time.Time // nil once the batch is urgent
			if !urgent(e) {
				calm = after(calmWait)
			}
		more:
			for len(batch) < batchMax {
				var (
					e  agent.Event
					ok bool
				)
				if calm == nil {
					select {
					case e, ok = <-events:
					default:
						break more
					}
				} else {
					select {
					case e, ok = <-events:
					case <-calm:
						break more
					}
				}
				if !ok {
					break more
				}
				batch = append(batch, e)
				if urgent(e) {
					calm = nil
				}
			}
			out <- batch
		}
	}()
	return out
}

// urgent tells the events fyne's goroutine should have at once: all but
// those of conversations not shown that only mark the list and the status
// to be read again: their turns, and the questions their clients were
// asked too. Such a question shows here only after clientGrace, and a
// client that answers at machine speed has it asked and closed within the
// calm wait: one hand-on for both, and no grace timer.
func (a *App) urgent(e agent.Event) bool {
	switch e.Kind {
	case agent.EventTurnStarted, agent.EventTurnEnded, agent.EventMemberProgress:
		return a.watch.wants(e)
	case agent.EventQuestionAsked:
		return !e.ClientAsked || a.watch.wants(e)
	case agent.EventQuestionClosed:
		// Answered here, the popup closes at once; answered in the
		// client, whose person is not looking at the popup, in a moment.
		return e.By != agent.ByClient || a.watch.wants(e)
	}
	return true
}

// statusEvery is the least time between two showings of the state (the
// status bar, the tray) as turns start and questions come and go unseen:
// under load a hundred calls a second would each lay the whole window out
// again to say that a client was used today.
const statusEvery = time.Second

// stateThrottle is the App's stateLater.
func (a *App) stateThrottle() throttle {
	return throttle{every: statusEvery, now: time.Now, after: a.afterOnUI, run: a.showState}
}
