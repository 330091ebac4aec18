package agent

import (
	"errors"
	"testing"
	"time"
)

// fakeClock is a registry's clock moved by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func loaded(id string) func() (Conversation, error) {
	return func() (Conversation, error) { return Conversation{ID: id, Principal: "p"}, nil }
}

// use acquires and releases a conversation, as one turn does.
func use(t *testing.T, r *registry, id string) {
	t.Helper()
	conv, err := r.acquire(id, nil, loaded(id))
	if err != nil {
		t.Fatalf("acquire %s: %v", id, err)
	}
	r.release(conv)
}

func held(r *registry, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.index[id]
	return ok
}

// TestRegistrySweepsIdleConversations: conversations idle past the TTL
// are dropped, fresh ones and busy ones kept, whatever their order.
func TestRegistrySweepsIdleConversations(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := newRegistry(100, time.Hour, clock.now)
	busy, err := r.acquire("old-busy", nil, loaded("old-busy")) // a turn that runs long
	if err != nil {
		t.Fatal(err)
	}
	use(t, r, "old-1")
	use(t, r, "old-2")
	clock.t = clock.t.Add(50 * time.Minute)
	use(t, r, "fresh")
	clock.t = clock.t.Add(20 * time.Minute) // the old ones are now 70 minutes idle
	use(t, r, "newest")                     // acquire sweeps
	for id, want := range map[string]bool{"old-1": false, "old-2": false, "old-busy": true, "fresh": true, "newest": true} {
		if got := held(r, id); got != want {
			t.Errorf("%s held: %v, want %v", id, got, want)
		}
	}
	r.release(busy)
	if r.len() != 3 {
		t.Errorf("%d held, want 3", r.len())
	}
}

// TestRegistryCapKeepsBusyConversations: above the cap the least recently
// used idle conversation goes; a busy one never does.
func TestRegistryCapKeepsBusyConversations(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	r := newRegistry(2, time.Hour, clock.now)
	busy, err := r.acquire("busy", nil, loaded("busy"))
	if err != nil {
		t.Fatal(err)
	}
	use(t, r, "a")
	use(t, r, "b")
	if !held(r, "busy") || held(r, "a") || !held(r, "b") {
		t.Errorf("held busy=%v a=%v b=%v; want busy and b", held(r, "busy"), held(r, "a"), held(r, "b"))
	}
	if _, err := r.acquire("busy", nil, loaded("busy")); !errors.Is(err, ErrConversationBusy) {
		t.Errorf("second acquire of a busy conversation: %v", err)
	}
	if _, err := r.acquire("busy", func(c Conversation) bool { return false }, loaded("busy")); !errors.Is(err, ErrUnknownConversation) {
		t.Errorf("a stranger's acquire of a busy conversation: %v, want ErrUnknownConversation", err)
	}
	r.release(busy)
}
