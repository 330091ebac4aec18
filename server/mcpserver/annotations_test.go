package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/tools"
)

// TestAgentIconAndHintsFollowEdits: on both eras, an agent's resource
// carries its icon too, and an edit of its tools or icon reaches the
// listing (the catalog is rebuilt, not kept from before).
func TestAgentIconAndHintsFollowEdits(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	a, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "fox", Name: "Fox", Model: ollamatest.DefaultModel, Enabled: true, Icon: "🦊"})
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("icons-"+era))
			res, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var icons []mcp.Icon
			for _, r := range res.Resources {
				if r.URI == mcpserver.AgentResourcePrefix+"fox" {
					icons = r.Icons
				}
			}
			if len(icons) != 1 || icons[0].MIMEType != "image/svg+xml" || !strings.HasPrefix(icons[0].Src, "data:image/svg+xml;base64,") {
				t.Errorf("the agent's resource icons = %+v", icons)
			}
		})
	}

	a.Icon = ""
	a.Tools = []agent.AgentTool{{Name: tools.NameWriteFile}, {Name: tools.NameFetchURL}}
	if _, err := h.core.Agents().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era+"/edited", func(t *testing.T) {
			list, err := connect(t, h.URL, era, h.token("edited-"+era)).ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name != "fox" {
					continue
				}
				an := tool.Annotations
				if tool.Icons != nil || *an.ReadOnlyHint || !*an.DestructiveHint || !*an.OpenWorldHint || *an.IdempotentHint {
					t.Errorf("after the edit: icons %v, annotations %+v", tool.Icons, an)
				}
				return
			}
			t.Error("fox is not listed")
		})
	}
}
