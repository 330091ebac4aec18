package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

func structuredOf(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %v", texts(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestSessionToolsAreOffByDefault(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	if names := toolNames(t, connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("a"))); strings.Join(names, ",") != "assistant" {
		t.Errorf("tools = %v", names)
	}
}

// TestSessionTools: a client lists and reads its own conversations, in
// pages, trimmed; another client sees none of them.
func TestSessionTools(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{SessionTools: true})
	alice := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("alice"))
	bob := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("bob"))
	if names := toolNames(t, alice); strings.Join(names, ",") != "assistant,deskhand.conversation,deskhand.conversations" {
		t.Errorf("tools = %v", names)
	}
	var handles []string
	for _, msg := range []string{"one", "two", strings.Repeat("long ", 1000)} {
		handles = append(handles, handleOf(t, call(t, alice, "assistant", map[string]any{"message": msg}, nil)))
	}
	call(t, bob, "assistant", map[string]any{"message": "bob's"}, nil)

	type page struct {
		Conversations []struct {
			Conversation, Agent, Title string
		}
		NextCursor string
	}
	var first, second page
	structuredOf(t, call(t, alice, mcpserver.ConversationsTool, map[string]any{"limit": 2}, nil), &first)
	structuredOf(t, call(t, alice, mcpserver.ConversationsTool, map[string]any{"limit": 2, "cursor": first.NextCursor}, nil), &second)
	var got []string
	for _, c := range append(first.Conversations, second.Conversations...) {
		got = append(got, c.Conversation)
		if c.Agent != "assistant" {
			t.Errorf("agent = %q", c.Agent)
		}
	}
	if first.NextCursor == "" || second.NextCursor != "" || strings.Join(got, ",") != strings.Join([]string{handles[2], handles[1], handles[0]}, ",") {
		t.Errorf("pages = %+v then %+v; want alice's three, last active first", first, second)
	}

	var read struct {
		Messages []struct {
			Role, Text string
			Trimmed    bool
		}
	}
	structuredOf(t, call(t, alice, mcpserver.ConversationTool, map[string]any{"conversation": handles[2]}, nil), &read)
	if len(read.Messages) != 2 || read.Messages[0].Role != "user" || !read.Messages[0].Trimmed || len([]rune(read.Messages[0].Text)) != 2001 || read.Messages[1].Role != "assistant" {
		t.Errorf("read = %+v", read)
	}

	// Bob gets for Alice's conversation what he gets for one never given.
	theirs := call(t, bob, mcpserver.ConversationTool, map[string]any{"conversation": handles[0]}, nil)
	if !theirs.IsError || firstText(theirs) != agent.UserMessage(agent.ErrUnknownConversation) {
		t.Errorf("another client's conversation: %v", texts(theirs))
	}
	var bobs page
	structuredOf(t, call(t, bob, mcpserver.ConversationsTool, nil, nil), &bobs)
	if len(bobs.Conversations) != 1 {
		t.Errorf("bob lists %+v", bobs)
	}
	for _, args := range []map[string]any{{"cursor": "forged"}, {"limit": 0}, {"cursor": first.NextCursor, "conversation": handles[0]}} {
		tool := mcpserver.ConversationsTool
		if args["conversation"] != nil {
			tool = mcpserver.ConversationTool // a list cursor is not a messages cursor
		}
		if res := call(t, alice, tool, args, nil); !res.IsError {
			t.Errorf("%s %v accepted", tool, args)
		}
	}
}
