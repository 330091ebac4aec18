package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestToolServersRoundTripAndCascade(t *testing.T) {
	ctx := t.Context()
	db := storetest.Open(t)
	at := time.UnixMilli(1_700_000_000_000).UTC()
	for _, a := range []agent.Agent{
		{ID: "a1", Slug: "one", Backend: agent.BackendProvider, CreatedAt: at, UpdatedAt: at},
		{ID: "a2", Slug: "two", Backend: agent.BackendProvider, CreatedAt: at, UpdatedAt: at},
	} {
		if err := db.PutAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	fs := agent.ToolServer{
		Name: "fs", Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp/x"},
		Env: map[string]string{"LEVEL": "debug"}, Dir: "/tmp", SecretEnv: []string{"TOKEN"},
		CreatedAt: at, UpdatedAt: at,
	}
	web := agent.ToolServer{
		Name: "web", URL: "https://example.com/mcp", Headers: map[string]string{"X-Team": "a"},
		SecretHeaders: []string{"Authorization"}, AllowSampling: true, CreatedAt: at, UpdatedAt: at,
	}
	for _, s := range []agent.ToolServer{web, fs} {
		if err := db.PutToolServer(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	changed := fs
	changed.Args, changed.UpdatedAt, changed.CreatedAt = []string{"srv"}, at.Add(time.Second), at.Add(time.Hour)
	if err := db.PutToolServer(ctx, changed); err != nil {
		t.Fatal(err)
	}
	fs.Args, fs.UpdatedAt = changed.Args, changed.UpdatedAt // the creation time stays
	got, err := db.ToolServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.ToolServer{fs, web}, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("tool servers (-want +got):\n%s", diff)
	}

	attachments := []agent.AgentToolServer{
		{AgentID: "a1", Server: "fs", Tools: []agent.AttachedTool{{Tool: "list_directory", Hash: "sha256:1"}, {Tool: "read_text_file", AskFirst: true, Hash: "sha256:2", Definition: `{"description":"read"}`}}},
		{AgentID: "a1", Server: "web", AllTools: true},
		{AgentID: "a2", Server: "fs", AllTools: true, Tools: []agent.AttachedTool{{Tool: "write_file", AskFirst: true, Hash: "sha256:3"}}},
	}
	for _, a := range attachments {
		if err := db.PutAgentToolServer(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// Put again replaces.
	attachments[0].Tools = attachments[0].Tools[1:]
	if err := db.PutAgentToolServer(ctx, attachments[0]); err != nil {
		t.Fatal(err)
	}
	gotA, err := db.AgentToolServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(attachments, gotA); diff != "" {
		t.Fatalf("attachments (-want +got):\n%s", diff)
	}
	for _, bad := range []agent.AgentToolServer{{AgentID: "nobody", Server: "fs"}, {AgentID: "a1", Server: "nothing"}} {
		if err := db.PutAgentToolServer(ctx, bad); !errors.Is(err, agent.ErrNotFound) {
			t.Errorf("attach %+v: %v, want ErrNotFound", bad, err)
		}
	}

	// Deleting the agent removes its attachments; deleting a server
	// detaches it everywhere.
	if err := db.DeleteAgent(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteToolServer(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	gotA, _ = db.AgentToolServers(ctx)
	if diff := cmp.Diff(attachments[:1], gotA); diff != "" {
		t.Errorf("attachments after deletes (-want +got):\n%s", diff)
	}
	if err := db.DeleteAgentToolServer(ctx, "a1", "fs"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteAgentToolServer(ctx, "a1", "fs"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("detaching again: %v, want ErrNotFound", err)
	}
	if err := db.DeleteToolServer(ctx, "web"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting a missing server: %v, want ErrNotFound", err)
	}
	gotA, _ = db.AgentToolServers(ctx)
	if len(gotA) != 0 {
		t.Errorf("attachments left: %+v", gotA)
	}
	// Attached again, it has none of its old tools.
	if err := db.PutAgentToolServer(ctx, agent.AgentToolServer{AgentID: "a1", Server: "fs"}); err != nil {
		t.Fatal(err)
	}
	gotA, _ = db.AgentToolServers(ctx)
	if diff := cmp.Diff([]agent.AgentToolServer{{AgentID: "a1", Server: "fs"}}, gotA); diff != "" {
		t.Errorf("attached again (-want +got):\n%s", diff)
	}
}
