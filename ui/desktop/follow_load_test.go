package desktop

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// pushEvents is an event source the test publishes on: to the
// subscription of the streamed kinds, what its filter keeps, as the core
// does.
type pushEvents struct {
	mu      sync.Mutex
	streams chan agent.Event
	keep    func(agent.Event) bool
	ready   chan struct{} // closed once it is subscribed
}

func (p *pushEvents) Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event {
	return p.SubscribeWhere(ctx, nil, kinds...)
}

func (p *pushEvents) SubscribeWhere(ctx context.Context, keep func(agent.Event) bool, kinds ...agent.EventKind) <-chan agent.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := make(chan agent.Event)
	if slices.Contains(kinds, agent.EventDelta) {
		p.streams, p.keep = ch, keep
		close(p.ready)
	}
	context.AfterFunc(ctx, func() { close(ch) })
	return ch
}

// publish sends a streamed event, if the subscription's filter keeps it.
func (p *pushEvents) publish(e agent.Event) {
	if p.keep == nil || p.keep(e) {
		p.streams <- e
	}
}

// TestOnlyTheStreamsShownReachTheUI: the streamed text of a thousand
// calls in other conversations never reaches fyne's goroutine; that of
// the open conversation does, in one update.
func TestOnlyTheStreamsShownReachTheUI(t *testing.T) {
	a, ui, convs := conversationsFixture(t, nil)
	v := a.conversations
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "a"})
	v.open("c2")
	ui.settle()
	counting := &countingConversations{Conversations: v.core.Conversations}
	v.core.Conversations = counting
	src := &pushEvents{ready: make(chan struct{})}
	a.core.Events = src
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	a.followStreams(ctx) // Follow's, without its other work
	<-src.ready
	for i := range 1000 {
		src.publish(agent.Event{Kind: []agent.EventKind{agent.EventDelta, agent.EventModelCall, agent.EventToolCall}[i%3], Conversation: "c9", Text: "x"})
	}
	convs.setLive("c2", agent.LiveTurn{TurnID: "t2", Writing: "ab", Chunks: 2})
	src.publish(agent.Event{Kind: agent.EventDelta, Conversation: "c2", Text: "b"})
	ui.waitQueued(1)
	ui.mu.Lock()
	queued := ui.queued
	ui.queued = nil
	ui.mu.Unlock()
	// Not settle: the follower runs until ctx ends. The update the event
	// asks for is queued as it is handled.
	for fs := queued; len(fs) > 0; {
		for _, f := range fs {
			f()
		}
		ui.mu.Lock()
		fs, ui.queued = ui.queued, nil
		ui.mu.Unlock()
	}
	if len(queued) != 1 || counting.snapshots.Load() != 1 || v.writing.Text != "ab" {
		t.Errorf("1,001 streamed events: %d calls to fyne's goroutine, %d snapshots, text %q; want 1, 1, \"ab\"", len(queued), counting.snapshots.Load(), v.writing.Text)
	}
	if !isStreamKind(agent.EventDelta) || isStreamKind(agent.EventTurnStarted) || isStreamKind(agent.EventQuestionAsked) {
		t.Error("the streamed kinds are wrong")
	}
}

// TestFollowOpensTheQuestionsAskedBefore: a question asked before the
// desktop follows the core (a client calling as the app starts) had no
// event, and its popup opens all the same.
func TestFollowOpensTheQuestionsAskedBefore(t *testing.T) {
	core := &fakeQuestions{pending: []agent.Question{question("q1")}}
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	src := &pushEvents{ready: make(chan struct{})}
	a.core.Events = src
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	a.Follow(ctx)
	<-src.ready
	ui.waitQueued(1)
	// Not settle: the follower runs until ctx ends.
	for {
		ui.mu.Lock()
		fs := ui.queued
		ui.queued = nil
		ui.mu.Unlock()
		if len(fs) == 0 {
			break
		}
		for _, f := range fs {
			f()
		}
	}
	if a.questions.popups["q1"] == nil {
		t.Error("no popup for the question asked before the desktop followed the core")
	}
}

// countingQuestions counts the reads of the questions waiting.
type countingQuestions struct {
	Questions
	pending int
}

func (c *countingQuestions) Pending() []agent.Question {
	c.pending++
	return c.Questions.Pending()
}

// TestQuestionsGoneBeforeShownAreNotDrawn: under load a client answers
// most questions before fyne's goroutine comes to them; their events
// look the question up once, and draw no list and no popup.
func TestQuestionsGoneBeforeShownAreNotDrawn(t *testing.T) {
	core := &fakeQuestions{} // q1 was asked and answered already
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}).asCore())
	counting := &countingQuestions{Questions: a.questions.core.Questions}
	a.questions.core.Questions = counting
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"})
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1", Text: string(agent.QuestionAnswered)})
	if counting.pending != 1 || len(a.questions.popups) != 0 {
		t.Errorf("a question gone before it was shown: %d reads of the questions waiting, %d popups; want 1, 0", counting.pending, len(a.questions.popups))
	}
}

// TestCalmEventsWaitForCompany: the turns of conversations not shown wait
// for the calm wait and go as one batch; an urgent event takes the batch
// waiting with it at once.
func TestCalmEventsWaitForCompany(t *testing.T) {
	events := make(chan agent.Event)
	calm := make(chan time.Time)
	var waits []time.Duration
	urgent := func(e agent.Event) bool { return e.Kind == agent.EventQuestionAsked }
	out := batches(events, urgent, func(d time.Duration) <-chan time.Time {
		waits = append(waits, d) // on batches' goroutine only
		return calm
	})
	defer func() {
		close(events)
		for range out {
		}
	}()
	turn := func(conv string) agent.Event {
		return agent.Event{Kind: agent.EventTurnEnded, Conversation: conv}
	}
	early := func(b []agent.Event) {
		t.Fatalf("%d calm events handed on before the calm wait", len(b))
	}
	for _, c := range []string{"c1", "c2", "c3"} {
		select {
		case events <- turn(c):
		case b := <-out:
			early(b)
		}
	}
	select {
	case b := <-out:
		early(b)
	default:
	}
	calm <- time.Time{}
	if b := <-out; len(b) != 3 {
		t.Errorf("after the calm wait: a batch of %d, want the 3 turns", len(b))
	}
	if len(waits) != 1 || waits[0] != calmWait {
		t.Errorf("waits %v, want one of %v", waits, calmWait)
	}

	events <- turn("c4")
	events <- agent.Event{Kind: agent.EventQuestionAsked, Conversation: "c5"}
	if b := <-out; len(b) != 2 || b[1].Kind != agent.EventQuestionAsked {
		t.Errorf("a question behind a calm turn: batch %v, want both at once", b)
	}
	events <- agent.Event{Kind: agent.EventQuestionAsked}
	if b := <-out; len(b) != 1 {
		t.Errorf("a question alone: batch of %d", len(b))
	}
}

// TestOnlyWhatIsNotShownIsCalm: the open conversation's turns and
// questions, the questions only the desktop was asked, those answered
// here, and every other kind of event are urgent.
func TestOnlyWhatIsNotShownIsCalm(t *testing.T) {
	a := &App{}
	a.watch.conversation("open")
	a.watch.turn("trying")
	for _, tc := range []struct {
		e    agent.Event
		want bool
	}{
		{agent.Event{Kind: agent.EventTurnStarted, Conversation: "other"}, false},
		{agent.Event{Kind: agent.EventTurnEnded, Conversation: "other", Turn: "t"}, false},
		{agent.Event{Kind: agent.EventMemberProgress, Conversation: "other"}, false},
		{agent.Event{Kind: agent.EventTurnStarted, Conversation: "open"}, true},
		{agent.Event{Kind: agent.EventTurnEnded, Conversation: "open"}, true},
		{agent.Event{Kind: agent.EventTurnEnded, Conversation: "x", Turn: "trying"}, true},
		{agent.Event{Kind: agent.EventQuestionAsked, Conversation: "other"}, true},
		{agent.Event{Kind: agent.EventQuestionClosed, Conversation: "other", By: agent.ByDesktop}, true},
		{agent.Event{Kind: agent.EventQuestionClosed, Conversation: "other", Text: "expired"}, true},
		{agent.Event{Kind: agent.EventQuestionAsked, Conversation: "other", ClientAsked: true}, false},
		{agent.Event{Kind: agent.EventQuestionClosed, Conversation: "other", ClientAsked: true, By: agent.ByClient}, false},
		{agent.Event{Kind: agent.EventQuestionClosed, Conversation: "other", ClientAsked: true, By: agent.ByDesktop}, true},
		{agent.Event{Kind: agent.EventQuestionAsked, Conversation: "open", ClientAsked: true}, true},
		{agent.Event{Kind: agent.EventQuestionClosed, Conversation: "open", ClientAsked: true, By: agent.ByClient}, true},
		{agent.Event{Kind: agent.EventAgentsChanged}, true},
	} {
		if got := a.urgent(tc.e); got != tc.want {
			t.Errorf("urgent(%+v) = %v, want %v", tc.e, got, tc.want)
		}
	}
}

// TestTimersLeaveNothingBehind: a timer's hook on the App's context goes
// once it fires, so that timers fired by the hundred thousand (a day of a
// busy desktop's throttles and question graces) leave the heap as it was.
func TestTimersLeaveNothingBehind(t *testing.T) {
	a := &App{ctx: t.Context(), do: func(f func()) { f() }}
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	// In rounds: each timer fired runs on a goroutine, and the runtime
	// keeps the goroutines it made for reuse.
	const rounds, timers = 100, 100_000
	for range rounds {
		var ran sync.WaitGroup
		ran.Add(timers / rounds)
		for range timers / rounds {
			a.afterOnUI(0, ran.Done)
		}
		ran.Wait()
	}
	if grew := heap() - before; grew > 2<<20 {
		t.Errorf("%d timers fired: the heap grew by %d bytes (%d a timer)", timers, grew, grew/timers)
	}
}
