package bridge_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// limitedToResearcher serves the agents researcher and the others named
// (each described as "the SLUG") beside the default one, to the client
// claude-desktop, which sees only researcher; it returns the endpoint
// and that client's token.
func limitedToResearcher(t *testing.T, others ...string) (url, token string) {
	t.Helper()
	url, core := server(t)
	for _, slug := range append([]string{"researcher"}, others...) {
		if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: slug, Description: "the " + slug, Model: "m", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, token, err := core.Clients().Create(t.Context(), "claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	if err := core.Clients().SetAgents(t.Context(), "claude-desktop", false, []string{"researcher"}); err != nil {
		t.Fatal(err)
	}
	return url, token
}

// TestBridgeFollowsVisibility: the stdio bridge speaks HTTP with its
// client's token, so a client limited to one agent sees only it through
// the bridge, and calling another is "not found", on both eras.
func TestBridgeFollowsVisibility(t *testing.T) {
	url, token := limitedToResearcher(t)
	for _, era := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(era, func(t *testing.T) {
			c := bridged(t, url, token, era)
			tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, []string{"researcher"}) {
				t.Errorf("tools through the bridge: %v, want [researcher]", names)
			}
			var req mcp.CallToolRequest
			req.Params.Name = "assistant"
			req.Params.Arguments = map[string]any{"message": "hi"}
			if _, err := c.CallTool(t.Context(), req); err == nil || !strings.Contains(err.Error(), "tool 'assistant' not found") {
				t.Errorf("calling a hidden agent through the bridge: %v, want tool not found", err)
			}
		})
	}
}

// TestBridgeHidesEscapedNames: a hidden agent's resource, read through the
// bridge under a spelling with JSON escapes, answers exactly as one that
// does not exist.
func TestBridgeHidesEscapedNames(t *testing.T) {
	url, token := limitedToResearcher(t, "scribe")
	r := runAs(t, url, token)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if _, err := io.WriteString(r.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	read := func(slug string) string {
		return r.send(t, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"deskhand:\/\/agents\/`+slug+`"}}`)
	}
	hidden, unknown := read("scribe"), strings.ReplaceAll(read("zcribe"), "zcribe", "scribe")
	if hidden != unknown || strings.Contains(hidden, "the scribe") {
		t.Errorf("hidden: %s\nunknown: %s", hidden, unknown)
	}
}
