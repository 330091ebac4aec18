package desktop

import (
	"bytes"
	"context"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"

	"github.com/deskhand/deskhand/server/agent"
)

// fakeActivity is the activity log (activityCore): rows held newest
// first, and a subscription the test feeds with send.
type fakeActivity struct {
	mu      sync.Mutex
	rows    []agent.ActivityRow // newest first
	clients []agent.Client
	err     error // Activity fails with it when set
	filters []agent.ActivityFilter
	sub     chan agent.Event  // the last subscription; closed when its context ends
	subKind []agent.EventKind // the kinds it asked for
	subbed  chan struct{}     // closed at the first Subscribe
	off     bool              // the core keeps no log
}

func newFakeActivity(rows ...agent.ActivityRow) *fakeActivity {
	return &fakeActivity{rows: rows, subbed: make(chan struct{})}
}

func (f *fakeActivity) List(_ context.Context, filter agent.ActivityFilter) ([]agent.ActivityRow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, filter)
	if f.err != nil {
		return nil, f.err
	}
	rows := f.rows
	if filter.Limit > 0 && len(rows) > filter.Limit {
		rows = rows[:filter.Limit]
	}
	return append([]agent.ActivityRow(nil), rows...), nil
}

func (f *fakeActivity) Clients() []agent.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]agent.Client(nil), f.clients...)
}

func (f *fakeActivity) Enabled() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.off
}

// Subscribe hands out an unbuffered channel: send returns once the
// follower has taken each row.
func (f *fakeActivity) Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event {
	ch := make(chan agent.Event)
	f.mu.Lock()
	f.sub, f.subKind = ch, kinds
	f.mu.Unlock()
	context.AfterFunc(ctx, func() { close(ch) })
	select {
	case <-f.subbed:
	default:
		close(f.subbed)
	}
	return ch
}

func (f *fakeActivity) SubscribeWhere(ctx context.Context, _ func(agent.Event) bool, kinds ...agent.EventKind) <-chan agent.Event {
	return f.Subscribe(ctx, kinds...)
}

// asCore is the Log tab's core: the log, its clients and its events.
func (f *fakeActivity) asCore() Core {
	return Core{Activity: f, Events: f, Clients: activityClients{f: f}}
}

// activityClients are the log's clients.
type activityClients struct {
	Clients
	f *fakeActivity
}

func (c activityClients) List() []agent.Client { return c.f.Clients() }

// record adds rows to the log (newest last) without telling anyone, as
// rows recorded before the first page is read.
func (f *fakeActivity) record(rows ...agent.ActivityRow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rows {
		f.rows = append([]agent.ActivityRow{r}, f.rows...)
	}
}

// send records rows and hands each to the subscriber, as the core does;
// it returns once the follower has taken the last one. It must not be
// called after the subscription's context ended.
func (f *fakeActivity) send(rows ...agent.ActivityRow) {
	<-f.subbed
	f.record(rows...)
	f.mu.Lock()
	ch := f.sub
	f.mu.Unlock()
	for _, r := range rows {
		ch <- agent.Event{Kind: agent.EventActivity, Activity: &r}
	}
}

func (f *fakeSettings) Calls(_ context.Context, since time.Time) (map[string]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.callsSince = since
	out := make(map[string]int, len(f.calls))
	for id, n := range f.calls {
		out[id] = n
	}
	return out, nil
}

// exportFile is a file chosen in the save dialog, in memory.
type exportFile struct {
	bytes.Buffer
	uri    fyne.URI
	closed bool
}

func newExportFile(path string) *exportFile { return &exportFile{uri: storage.NewFileURI(path)} }

func (f *exportFile) Close() error {
	f.closed = true
	return nil
}

func (f *exportFile) URI() fyne.URI { return f.uri }
