package desktop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// questionsFake is the Questions tab's core alone: the questions'
// fake, plus the agents, clients and conversation a popup names.
type questionsFake struct {
	*fakeQuestions
	agents   []agent.Agent
	clients  []agent.Client
	messages map[string][]agent.Message // by conversation
	// read is told each conversation read, when set.
	read chan string
}

// asCore is the Questions tab's core: the questions, and the agents,
// clients and transcripts a popup names.
func (f *questionsFake) asCore() Core {
	return Core{Questions: f.fakeQuestions, Agents: agentList{list: f.agents}, Clients: clientList{list: f.clients},
		Conversations: transcripts{f: f}, Events: quietEvents{}, Approvals: f.Approvals()}
}

// transcripts are the conversations a popup reads.
type transcripts struct {
	Conversations
	f *questionsFake
}

func (t transcripts) Transcript(ctx context.Context, id string) ([]agent.Message, []agent.Turn, error) {
	return t.f.Transcript(ctx, id)
}

func (f *questionsFake) Transcript(_ context.Context, id string) ([]agent.Message, []agent.Turn, error) {
	if f.read != nil {
		f.read <- id
	}
	return f.messages[id], nil, nil
}

// testClock is the countdowns' clock: a time the test moves, and ticks it
// sends.
type testClock struct {
	mu    sync.Mutex
	t     time.Time
	ticks chan time.Time
	stops int // tickers stopped
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// advance moves the clock and sends a tick, which a popup's countdown
// goroutine takes.
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	t := c.t
	c.mu.Unlock()
	c.ticks <- t
}

func (c *testClock) ticker() (<-chan time.Time, func()) {
	return c.ticks, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.stops++
	}
}

func (c *testClock) stopped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stops
}

// questionsScreen is the Questions tab alone, on its fake, with a test
// clock.
func questionsScreen(t *testing.T, core *questionsFake) (*questionsView, *testUI, *testClock) {
	t.Helper()
	a, u := newShell(t)
	clock := &testClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), ticks: make(chan time.Time)}
	a.questions = newQuestionsView(a, core.asCore())
	a.questions.now, a.questions.ticker = clock.now, clock.ticker
	a.win.SetContent(a.questions.content())
	return a.questions, u, clock
}

// runQueued runs what waits for fyne's goroutine without waiting for the
// App's goroutines (a popup's countdown runs until the popup closes).
func (u *testUI) runQueued() {
	u.mu.Lock()
	fs := u.queued
	u.queued = nil
	u.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
