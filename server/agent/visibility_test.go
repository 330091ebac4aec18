package agent_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestClientVisibility(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{Slug: "researcher", Model: "m", Enabled: true})
	ctx := t.Context()
	for _, slug := range []string{"scribe", "coder"} {
		if _, err := f.core.Agents().Save(ctx, agent.Agent{Slug: slug, Model: "m", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	cursor, _, err := f.core.Clients().Create(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	claude, _, err := f.core.Clients().Create(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	events := f.core.Events().Subscribe(ctx, agent.EventClientAgentsChanged)

	if v := f.core.Clients().VisibleTo(cursor.ID); !v.All || v.String() != "all agents" {
		t.Errorf("a new client sees %v, want all agents", v)
	}
	if err := f.core.Clients().SetAgents(ctx, "cursor", false, []string{"scribe", "researcher", "scribe"}); err != nil {
		t.Fatal(err)
	}
	if e := <-events; e.Text != cursor.ID {
		t.Errorf("event names %q, want cursor's ID %q", e.Text, cursor.ID)
	}
	v := f.core.Clients().VisibleTo(cursor.ID)
	tests := []struct {
		slug string
		want bool
	}{{"researcher", true}, {"scribe", true}, {"coder", false}, {"missing", false}}
	for _, tt := range tests {
		if got := v.Sees(tt.slug); got != tt.want {
			t.Errorf("cursor Sees(%q) = %v, want %v", tt.slug, got, tt.want)
		}
		if !f.core.Clients().VisibleTo(claude.ID).Sees(tt.slug) || !f.core.Clients().VisibleTo(agent.LocalPrincipal).Sees(tt.slug) {
			t.Errorf("claude or the local principal does not see %q", tt.slug)
		}
	}
	if got, want := v.String(), "2 agents: researcher, scribe"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}

	// An unknown slug is a user error and changes nothing.
	err = f.core.Clients().SetAgents(ctx, "cursor", false, []string{"coder", "nope"})
	var ue *agent.UserError
	if !errors.As(err, &ue) || !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("unknown slug: err = %v, want a user error wrapping ErrNotFound", err)
	}
	if got := f.core.Clients().VisibleTo(cursor.ID).Slugs(); !slices.Equal(got, []string{"researcher", "scribe"}) {
		t.Errorf("after a refused change cursor sees %v", got)
	}
	if err := f.core.Clients().SetAgents(ctx, "nobody", true, nil); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("unknown client: err = %v", err)
	}

	// A rename keeps the agent visible; a deletion drops it.
	r, _ := f.core.Agents().BySlug("researcher")
	r.Slug = "finder"
	if _, err := f.core.Agents().Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := f.core.Agents().Delete(ctx, "scribe"); err != nil {
		t.Fatal(err)
	}
	if got := f.core.Clients().VisibleTo(cursor.ID).Slugs(); !slices.Equal(got, []string{"finder"}) {
		t.Errorf("after rename and delete cursor sees %v, want [finder]", got)
	}

	// The set survives a restart.
	core2, err := agent.New(ctx, agent.Config{History: f.db})
	if err != nil {
		t.Fatal(err)
	}
	defer core2.Close()
	if got, err := core2.Clients().Visibility("cursor"); err != nil || got.String() != "1 agent: finder" {
		t.Errorf("reloaded: %v, %v; want 1 agent: finder", got, err)
	}

	if err := f.core.Clients().SetAgents(ctx, "cursor", true, nil); err != nil {
		t.Fatal(err)
	}
	if !f.core.Clients().VisibleTo(cursor.ID).All {
		t.Error("after --all cursor does not see all agents")
	}
}

// BenchmarkVisibleTo is the check every MCP request makes, for a client
// that sees all agents and one limited to some: memory only.
func BenchmarkVisibleTo(b *testing.B) {
	core, err := agent.New(b.Context(), agent.Config{History: storetest.Open(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(core.Close)
	for _, slug := range []string{"researcher", "scribe"} {
		if _, err := core.Agents().Save(b.Context(), agent.Agent{Slug: slug, Model: "m", Enabled: true}); err != nil {
			b.Fatal(err)
		}
	}
	all, _, _ := core.Clients().Create(b.Context(), "all")
	some, _, _ := core.Clients().Create(b.Context(), "some")
	if err := core.Clients().SetAgents(b.Context(), "some", false, []string{"scribe"}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []agent.Client{all, some} {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !core.Clients().VisibleTo(c.ID).Sees("scribe") {
					b.Fatal("scribe not visible")
				}
			}
		})
	}
}

// A client limited to some agents cannot list or read its conversations
// with the others: they are unknown, as if they never were; paging skips
// them without ending early. The person at the desktop reads them all.
func TestHiddenAgentsConversationsAreUnknown(t *testing.T) {
	// A clock a millisecond on at each reading: the conversations are
	// listed last active first, which two made in the same millisecond
	// would leave to their IDs.
	var ticks atomic.Int64
	start0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return start0.Add(time.Duration(ticks.Add(1)) * time.Millisecond) }
	f := newFixture(t, agent.Config{Now: now}, agent.Agent{})
	f.model.Reply = func(context.Context, int, agent.ChatRequest, func(agent.Delta)) (agent.ChatResponse, error) {
		return agenttest.Text("ok"), nil
	}
	if _, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "other", Model: "m", Conversations: true, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	cursor, _, err := f.core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	start := func(slug string) string {
		res, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: slug, Principal: cursor.ID, Message: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Conversation.ID
	}
	visible := []string{start("helper")}
	var hidden []string
	for range 4 {
		hidden = append(hidden, start("other"))
	}
	visible = append(visible, start("helper"))
	if err := f.core.Clients().SetAgents(t.Context(), "cursor", false, []string{"helper"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.core.Conversations().Read(t.Context(), cursor.ID, hidden[0]); !errors.Is(err, agent.ErrUnknownConversation) {
		t.Errorf("reading a hidden agent's conversation: %v, want ErrUnknownConversation", err)
	}
	if _, _, err := f.core.Conversations().Read(t.Context(), cursor.ID, visible[0]); err != nil {
		t.Errorf("reading a visible agent's conversation: %v", err)
	}
	// The person at the desktop sees every conversation.
	if c, err := f.core.Conversations().Get(t.Context(), hidden[0]); err != nil || c.ID != hidden[0] || c.Principal != cursor.ID || c.AgentID == "" {
		t.Errorf("the desktop reading a hidden agent's conversation: %+v, %v", c, err)
	}
	if _, err := f.core.Conversations().Get(t.Context(), "no-such-conversation"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("reading a conversation never made: %v, want ErrNotFound", err)
	}
	var listed []string
	var after agent.PageMark
	for range 10 {
		page, err := f.core.Conversations().ListFor(t.Context(), cursor.ID, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		listed = append(listed, page[0].ID)
		after = agent.PageMark{UpdatedAt: page[0].UpdatedAt, ID: page[0].ID}
	}
	slices.Reverse(visible) // last active first
	if !slices.Equal(listed, visible) {
		t.Errorf("listed %v, want the visible agent's %v", listed, visible)
	}
}
