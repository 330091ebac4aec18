package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestAgentIcon: an agent's icon (an emoji, or an image as a data: URI)
// is kept and replaced with the agent; one saved before 0008 has none.
func TestAgentIcon(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := openConn(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, old, path, allMigrations(t)[:7]); err != nil {
		t.Fatalf("migrate to 7: %v", err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO agents (id, slug, name, backend, provider, tools, created_at, updated_at)
		VALUES ('a0', 'older', 'Older', 'provider', 'ollama', '[]', 1000, 2000)`); err != nil {
		t.Fatalf("write a version-7 agent: %v", err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	const png = "data:image/png;base64,iVBORw0KGgo="
	for _, a := range []agent.Agent{
		{ID: "a1", Slug: "fox", Backend: agent.BackendProvider, Icon: "🦊"},
		{ID: "a2", Slug: "pic", Backend: agent.BackendProvider, Icon: png},
	} {
		if err := db.PutAgent(ctx, a); err != nil {
			t.Fatalf("PutAgent(%s): %v", a.Slug, err)
		}
	}
	icons := func() map[string]string {
		t.Helper()
		agents, err := db.Agents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, a := range agents {
			out[a.Slug] = a.Icon
		}
		return out
	}
	got := icons()
	if got["older"] != "" || got["fox"] != "🦊" || got["pic"] != png {
		t.Errorf("icons = %q; want none for the older agent, the emoji and the image", got)
	}
	// Replacing the agent replaces its icon, and clears it.
	if err := db.PutAgent(ctx, agent.Agent{ID: "a1", Slug: "fox", Backend: agent.BackendProvider}); err != nil {
		t.Fatal(err)
	}
	if got := icons(); got["fox"] != "" {
		t.Errorf("icon after clearing = %q", got["fox"])
	}
}
