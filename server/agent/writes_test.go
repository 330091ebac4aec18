package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// stallingHistory is the real store whose agent and client writes wait
// at a gate, as when another program holds the database: each write
// announces itself on entered, then waits until the gate opens.
type stallingHistory struct {
	*store.DB
	stall   chan struct{} // closed: writes pass; open: they wait at gate
	gate    chan struct{}
	entered chan string
	once    sync.Once

	mu      sync.Mutex
	touches map[string]time.Time // TouchClient calls that got through
}

func newStallingHistory(t *testing.T) *stallingHistory {
	h := &stallingHistory{DB: storetest.Open(t), stall: make(chan struct{}), gate: make(chan struct{}), entered: make(chan string, 16), touches: map[string]time.Time{}}
	close(h.stall) // open until stallWrites
	return h
}

func (h *stallingHistory) stallWrites() { h.stall = make(chan struct{}) }
func (h *stallingHistory) open()        { h.once.Do(func() { close(h.gate) }) }

func (h *stallingHistory) wait(op string) {
	select {
	case <-h.stall:
		return
	default:
	}
	h.entered <- op
	<-h.gate
}

func (h *stallingHistory) PutAgent(ctx context.Context, a agent.Agent) error {
	h.wait("PutAgent")
	return h.DB.PutAgent(ctx, a)
}

func (h *stallingHistory) PutClient(ctx context.Context, c agent.Client) error {
	h.wait("PutClient")
	return h.DB.PutClient(ctx, c)
}

func (h *stallingHistory) TouchClient(ctx context.Context, id string, at time.Time) error {
	h.wait("TouchClient")
	h.mu.Lock()
	h.touches[id] = at
	h.mu.Unlock()
	return h.DB.TouchClient(ctx, id, at)
}

func (h *stallingHistory) touched(id string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.touches[id]
	return at, ok
}

// within fails the test when fn does not return in time: fn should not
// wait for anything, so the bound is only there to turn a hang into a
// failure.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waited for a store write held elsewhere", what)
	}
}

// TestRequestsDoNotWaitForStoreWrites: while the store holds an agent's
// or a client's write, or a flush of last uses, requests (authentication,
// agent lookups) go on; and authentication never writes: the last use is
// kept in memory, reaches the store at a flush, and at Close.
func TestRequestsDoNotWaitForStoreWrites(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	h := newStallingHistory(t)
	t.Cleanup(h.open)
	core, err := agent.New(t.Context(), agent.Config{History: h, Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	ctx := t.Context()
	if _, err := core.Agents().Save(ctx, agent.Agent{Slug: "helper", Model: "m", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	alice, aliceToken, err := core.Clients().Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, bobToken, err := core.Clients().Create(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}

	// Authentication does not write: the store never sees a touch, so a
	// stalled one cannot hold anybody up.
	h.stallWrites()
	within(t, "Authenticate", func() {
		if got, ok := core.Clients().Authenticate(ctx, aliceToken); !ok || got.ID != alice.ID || !got.LastUsedAt.Equal(now) {
			t.Errorf("Authenticate(alice) = %+v, %v", got, ok)
		}
	})
	if _, ok := h.touched(alice.ID); ok {
		t.Error("Authenticate wrote the last use on the request path")
	}

	// An agent's save and a client's revocation are held by the store;
	// requests go on.
	saved := make(chan error, 1)
	go func() {
		_, err := core.Agents().Save(ctx, agent.Agent{Slug: "other", Model: "m", Enabled: true})
		saved <- err
	}()
	if op := <-h.entered; op != "PutAgent" {
		t.Fatalf("store write %s, want PutAgent", op)
	}
	revoked := make(chan error, 1)
	go func() { revoked <- core.Clients().Revoke(ctx, "alice") }()
	if op := <-h.entered; op != "PutClient" {
		t.Fatalf("store write %s, want PutClient", op)
	}
	// A flush of last uses held by the store holds nobody up either.
	flushed := make(chan error, 1)
	go func() { flushed <- core.Clients().FlushLastUse(ctx) }()
	if op := <-h.entered; op != "TouchClient" {
		t.Fatalf("store write %s, want TouchClient", op)
	}
	within(t, "Authenticate of another client", func() {
		if got, ok := core.Clients().Authenticate(ctx, bobToken); !ok || got.ID != bob.ID {
			t.Errorf("Authenticate(bob) = %+v, %v", got, ok)
		}
	})
	within(t, "AgentBySlug", func() {
		if _, ok := core.Agents().BySlug("helper"); !ok {
			t.Error("helper not found while another agent is saved")
		}
	})
	within(t, "Clients", func() { core.Clients().List() })
	h.open()
	if err := <-saved; err != nil {
		t.Errorf("SaveAgent: %v", err)
	}
	if err := <-revoked; err != nil {
		t.Errorf("RevokeClient: %v", err)
	}
	if err := <-flushed; err != nil {
		t.Errorf("FlushLastUse: %v", err)
	}
	if at, ok := h.touched(alice.ID); !ok || !at.Equal(now) {
		t.Errorf("alice's last use in the store = %v, %v; want %v", at, ok, now)
	}
	if _, ok := core.Clients().Authenticate(ctx, aliceToken); ok {
		t.Error("a revoked token is accepted")
	}

	// The next flush writes the use made during the last one.
	if err := core.Clients().FlushLastUse(ctx); err != nil {
		t.Fatal(err)
	}
	if at, ok := h.touched(bob.ID); !ok || !at.Equal(now) {
		t.Errorf("bob's last use in the store = %v, %v; want %v", at, ok, now)
	}
	// One later in the granularity is kept, and written at Close.
	clock.Lock()
	now = now.Add(2 * time.Minute)
	clock.Unlock()
	if _, ok := core.Clients().Authenticate(ctx, bobToken); !ok {
		t.Fatal("bob refused")
	}
	core.Close()
	stored, err := h.DB.Clients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range stored {
		if cl.ID == bob.ID && !cl.LastUsedAt.Equal(now) {
			t.Errorf("after Close bob's last use in the store = %v, want %v", cl.LastUsedAt, now)
		}
	}
}

// TestDeleteAgentWaitsForItsTurn: deleting an agent waits until its
// stopped turn has ended, and not a poll longer; a caller that gives up
// gets its error back at once and the agent stays.
func TestDeleteAgentWaitsForItsTurn(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started, stopped, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var unblock sync.Once
	letGo := func() { unblock.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		close(started)
		<-ctx.Done()
		close(stopped)
		<-release // a turn slow to wind down
		return agent.ChatResponse{}, ctx.Err()
	}
	turn := make(chan error, 1)
	go func() { _, err := f.run(t, "p", "", "work hard"); turn <- err }()
	<-started

	// The caller gives up while the turn winds down: Agents.Delete returns
	// with the cause and the agent stays.
	giveUp, cancel := context.WithCancelCause(t.Context())
	deleted := make(chan error, 1)
	go func() { deleted <- f.core.Agents().Delete(giveUp, "helper") }()
	<-stopped
	gaveUp := errors.New("the person closed the window")
	cancel(gaveUp)
	within(t, "DeleteAgent after its caller gave up", func() {
		if err := <-deleted; !errors.Is(err, gaveUp) {
			t.Errorf("DeleteAgent = %v, want the caller's cause", err)
		}
	})
	if _, ok := f.core.Agents().BySlug("helper"); !ok {
		t.Error("the agent went although its deletion was given up")
	}
	letGo()
	if err := <-turn; !strings.Contains(agent.UserMessage(err), "agent was deleted") {
		t.Errorf("the turn ended with %v", err)
	}
	// With no turn left, the deletion goes through.
	if err := f.core.Agents().Delete(t.Context(), "helper"); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaCheckPort: Agents.Save runs Config.CheckSchema on a response
// schema and refuses the agent with the checker's words; agents without a
// schema are not checked.
func TestSchemaCheckPort(t *testing.T) {
	var checked []string
	check := func(schema json.RawMessage) error {
		checked = append(checked, string(schema))
		if strings.Contains(string(schema), "bad") {
			return errors.New("at '/bad': no such keyword")
		}
		return nil
	}
	f := newFixture(t, agent.Config{CheckSchema: check}, agent.Agent{})
	if _, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "good", ResponseSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
		t.Errorf("a good schema: %v", err)
	}
	_, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "worse", ResponseSchema: json.RawMessage(`{"bad":1}`)})
	if msg := agent.UserMessage(err); !strings.Contains(msg, "response schema") || !strings.Contains(msg, "at '/bad': no such keyword") {
		t.Errorf("a bad schema: %v (user message %q)", err, msg)
	}
	if _, ok := f.core.Agents().BySlug("worse"); ok {
		t.Error("the agent with a bad schema was saved")
	}
	// An agent that came through JSON without a schema carries null: no schema.
	saved, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "plain", ResponseSchema: json.RawMessage(` null `)})
	if err != nil || saved.ResponseSchema != nil {
		t.Errorf("a null schema: %v, saved %q", err, saved.ResponseSchema)
	}
	if len(checked) != 2 {
		t.Errorf("checked %q; want the two schemas only", checked)
	}
}
