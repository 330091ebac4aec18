package mcpserver_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/tools"
)

var update = flag.Bool("update", false, "rewrite the golden tool schemas in testdata/tools")

// TestToolSchemasGolden pins what clients see of each kind of agent tool,
// the same on both eras: input and output schemas, the annotations
// derived from the tools an agent can reach (none: read-only; write_file:
// destructive; fetch_url: open world), its title, and its icon (an emoji
// drawn in an SVG, or an image). Run "go test ./server/mcpserver -run
// Golden -update" after an intended change; a missing golden file fails
// unless -update is given.
func TestToolSchemasGolden(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	// A 2x1 PNG, so that its icon's sizes are pinned too.
	const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAAAAADRSSBWAAAAD0lEQVR4nGJiYAAEAAD//wAJAAMniT3jAAAAAElFTkSuQmCC"
	for _, a := range []agent.Agent{
		{Slug: "oneshot", Name: "One shot", Description: "Answers without memory.", Model: ollamatest.DefaultModel, Enabled: true},
		{Slug: "extractor", Name: "Extractor", Model: ollamatest.DefaultModel, Enabled: true, Conversations: true,
			ResponseSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		{Slug: "counter", Name: "Counter", Model: ollamatest.DefaultModel, Enabled: true,
			ResponseSchema: json.RawMessage(`{"type":"integer"}`)},
		{Slug: "reader", Name: "Reader", Model: ollamatest.DefaultModel, Enabled: true,
			Tools: []agent.AgentTool{{Name: tools.NameReadFile}, {Name: tools.NameListDir}, {Name: tools.NameCurrentTime}}},
		{Slug: "writer", Name: "Writer", Model: ollamatest.DefaultModel, Enabled: true,
			Tools: []agent.AgentTool{{Name: tools.NameReadFile}, {Name: tools.NameWriteFile, NeedsApproval: true}}},
		{Slug: "fetcher", Name: "Fetcher", Model: ollamatest.DefaultModel, Enabled: true,
			Tools: []agent.AgentTool{{Name: tools.NameFetchURL, NeedsApproval: true}}},
		{Slug: "fox", Name: "Fox", Model: ollamatest.DefaultModel, Enabled: true, Icon: "🦊"},
		{Slug: "pictured", Name: "Pictured", Model: ollamatest.DefaultModel, Enabled: true, Icon: png},
	} {
		if _, err := h.core.Agents().Save(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	// check compares a listing with the golden files (the first writes
	// them with -update; the others are compared with what it wrote).
	check := func(t *testing.T, list *mcp.ListToolsResult, write bool) {
		t.Helper()
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			got, err := json.MarshalIndent(tool, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "tools", tool.Name+".json")
			if write {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("golden %s missing (run with -update to create it): %v", path, err)
			}
			var gotV, wantV any
			_ = json.Unmarshal(got, &gotV)
			if err := json.Unmarshal(want, &wantV); err != nil {
				t.Fatalf("golden %s: %v", path, err)
			}
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("tool %s changed (-golden +got):\n%s", tool.Name, diff)
			}
		}
		want := []string{"assistant", "counter", "extractor", "fetcher", "fox", "oneshot", "pictured", "reader", "writer"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("tools not listed in name order (-want +got):\n%s", diff)
		}
	}
	for i, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("golden-"+era))
			list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			check(t, list, *update && i == 0)
		})
	}
	t.Run("stdio", func(t *testing.T) {
		list, err := stdioClient(t, h).ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, list, false)
	})
	// On the wire, as the catalog encoded it: every hint set, false
	// included, and the icon.
	_, body := rawList(t, h.URL, h.token("golden-raw"), "", nil)
	for _, want := range []string{
		`"annotations":{"title":"Fox","readOnlyHint":true,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}`,
		`"icons":[{"src":"data:image/svg+xml;base64,`,
		`"annotations":{"title":"Writer","readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("raw tools/list lacks %s:\n%.2000s", want, body)
		}
	}
}

// TestStructuredContent: a response schema becomes outputSchema and the
// answer structuredContent; a non-object root is wrapped as "result".
func TestStructuredContent(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(func(req ollamaChat) ollamatest.Reply {
		if req.Format != nil && string(req.Format) == `{"type":"integer"}` {
			return ollamatest.Reply{Content: "7"}
		}
		return ollamatest.Reply{Content: `{"name":"Ada"}`}
	}))
	for _, a := range []agent.Agent{
		{Slug: "extractor", Model: ollamatest.DefaultModel, Enabled: true, Conversations: true,
			ResponseSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		{Slug: "counter", Model: ollamatest.DefaultModel, Enabled: true, ResponseSchema: json.RawMessage(`{"type":"integer"}`)},
		{Slug: "strict", Model: ollamatest.DefaultModel, Enabled: true,
			ResponseSchema: json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer"}},"required":["age"]}`)},
	} {
		if _, err := h.core.Agents().Save(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("s-"+era))
			res := call(t, c, "extractor", map[string]any{"message": "Ada"}, nil)
			if res.IsError || !cmp.Equal(res.StructuredContent, map[string]any{"name": "Ada"}) || firstText(res) != `{"name":"Ada"}` {
				t.Errorf("extractor: %+v %v", res.StructuredContent, texts(res))
			}
			handleOf(t, res) // conversations on: the handle rides along, structuredContent untouched
			res = call(t, c, "counter", map[string]any{"message": "count"}, nil)
			if res.IsError || !cmp.Equal(res.StructuredContent, map[string]any{"result": float64(7)}) {
				t.Errorf("counter: %+v %v", res.StructuredContent, texts(res))
			}
			if res.Meta != nil && res.Meta.AdditionalFields[mcpserver.ConversationMetaKey] != nil {
				t.Error("an agent without conversations returned a handle")
			}
			// The answer does not fit the schema: the client gets an error, not bad data.
			res = call(t, c, "strict", map[string]any{"message": "age?"}, nil)
			if !res.IsError {
				t.Errorf("schema violation passed: %+v", res.StructuredContent)
			}
		})
	}
}
