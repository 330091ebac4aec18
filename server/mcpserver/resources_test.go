package mcpserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/mcpserver"
)

// TestResourcesAndPrompts: each enabled agent's description is a
// resource and its starter prompts are prompts, on both eras; a
// conversation reads as a resource for its owner only.
func TestResourcesAndPrompts(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	a, _ := h.core.Agents().BySlug("assistant")
	a.Description = "Helps with anything."
	a.StarterPrompts = []string{"Plan my week", "Summarise today's notes"}
	if _, err := h.core.Agents().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			owner := connect(t, h.URL, era, h.token("owner-"+era))
			other := connect(t, h.URL, era, h.token("other-"+era))

			res, err := owner.ListResources(t.Context(), mcp.ListResourcesRequest{})
			if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != mcpserver.AgentResourcePrefix+"assistant" {
				t.Fatalf("resources = %+v, %v", res, err)
			}
			read, err := owner.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: res.Resources[0].URI}})
			if err != nil || !strings.Contains(read.Contents[0].(mcp.TextResourceContents).Text, "Helps with anything.") {
				t.Errorf("read agent resource: %+v, %v", read, err)
			}
			templates, err := owner.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
			if err != nil || len(templates.ResourceTemplates) != 1 {
				t.Errorf("templates = %+v, %v", templates, err)
			}

			handle := handleOf(t, call(t, owner, "assistant", map[string]any{"message": "Remember the blue door."}, nil))
			uri := mcpserver.ConversationResourcePrefix + handle
			mine, err := owner.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || !strings.Contains(mine.Contents[0].(mcp.TextResourceContents).Text, "Remember the blue door.") {
				t.Errorf("the owner reads %+v, %v", mine, err)
			}
			wantCode := mcp.ErrResourceNotFound // -32002
			if era == mcp.ProtocolVersion20260728 {
				wantCode = mcp.ErrInvalidParams // -32602, as 2026-07-28 says
			}
			for _, u := range []string{uri, mcpserver.ConversationResourcePrefix + "00000000-0000-4000-8000-000000000000"} {
				_, err = other.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: u}})
				if !errors.Is(err, wantCode) || !strings.Contains(err.Error(), "resource not found") {
					t.Errorf("another client reads %s: %v, want %v", u, err, wantCode)
				}
			}

			prompts, err := owner.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
			if err != nil || len(prompts.Prompts) != 2 || prompts.Prompts[0].Name != "assistant.1" {
				t.Fatalf("prompts = %+v, %v", prompts, err)
			}
			got, err := owner.GetPrompt(t.Context(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "assistant.2"}})
			if err != nil || len(got.Messages) != 1 || !strings.Contains(got.Messages[0].Content.(mcp.TextContent).Text, "Summarise today's notes") {
				t.Errorf("prompt = %+v, %v", got, err)
			}
		})
	}

	// A disabled agent leaves the resources and prompts too.
	if err := h.core.Agents().SetEnabled(t.Context(), "assistant", false); err != nil {
		t.Fatal(err)
	}
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("after"))
	if res, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{}); err != nil || len(res.Resources) != 0 {
		t.Errorf("resources of a disabled agent: %+v, %v", res, err)
	}
	if res, err := c.ListPrompts(t.Context(), mcp.ListPromptsRequest{}); err != nil || len(res.Prompts) != 0 {
		t.Errorf("prompts of a disabled agent: %+v, %v", res, err)
	}
}
