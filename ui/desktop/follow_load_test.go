package desktop

import (
	"context"
	"slices"
	"sync"
	"testing"

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
	counting := &countingConversations{conversationsCore: v.core}
	v.core = counting
	src := &pushEvents{ready: make(chan struct{})}
	a.events = src
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
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}))
	src := &pushEvents{ready: make(chan struct{})}
	a.events = src
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
	questionsCore
	pending int
}

func (c *countingQuestions) Pending() []agent.Question {
	c.pending++
	return c.questionsCore.Pending()
}

// TestQuestionsGoneBeforeShownAreNotDrawn: under load a client answers
// most questions before fyne's goroutine comes to them; their events
// look the question up once, and draw no list and no popup.
func TestQuestionsGoneBeforeShownAreNotDrawn(t *testing.T) {
	core := &fakeQuestions{} // q1 was asked and answered already
	a, _ := newTestApp(t, newFakeCore(fakeCore{fakeQuestions: core}))
	counting := &countingQuestions{questionsCore: a.questions.core}
	a.questions.core = counting
	a.handle(agent.Event{Kind: agent.EventQuestionAsked, Question: "q1"})
	a.handle(agent.Event{Kind: agent.EventQuestionClosed, Question: "q1", Text: string(agent.QuestionAnswered)})
	if counting.pending != 1 || len(a.questions.popups) != 0 {
		t.Errorf("a question gone before it was shown: %d reads of the questions waiting, %d popups; want 1, 0", counting.pending, len(a.questions.popups))
	}
}
