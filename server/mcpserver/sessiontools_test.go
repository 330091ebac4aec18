package mcpserver_test

import (
	"encoding/json"
	"maps"
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

// sessionPage is one page of a session tool's answer: deskhand.conversations
// fills Conversations, deskhand.conversation Messages.
type sessionPage struct {
	Conversations []struct {
		Conversation, Agent, Title string
	}
	Messages   []sessionMessage
	NextCursor string
}

type sessionMessage struct {
	Role, Text string
	Trimmed    bool
}

// sessionPages calls a session tool with args, then again with each
// page's nextCursor until a page has none, and returns every page. A tool
// error, or more than maxSessionPages pages, stops the test.
func sessionPages(t *testing.T, c *client.Client, tool string, args map[string]any) []sessionPage {
	t.Helper()
	const maxSessionPages = 100
	var pages []sessionPage
	for cursor := ""; ; {
		a := maps.Clone(args)
		if cursor != "" {
			if a == nil {
				a = map[string]any{}
			}
			a["cursor"] = cursor
		}
		var p sessionPage
		structuredOf(t, call(t, c, tool, a, nil), &p)
		pages = append(pages, p)
		if cursor = p.NextCursor; cursor == "" {
			return pages
		}
		if len(pages) == maxSessionPages {
			t.Fatalf("%s %v: still a next page after %d", tool, args, maxSessionPages)
		}
	}
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

	pages := sessionPages(t, alice, mcpserver.ConversationsTool, map[string]any{"limit": 2})
	var got []string
	for _, p := range pages {
		for _, c := range p.Conversations {
			got = append(got, c.Conversation)
			if c.Agent != "assistant" {
				t.Errorf("agent = %q", c.Agent)
			}
		}
	}
	if len(pages) != 2 || strings.Join(got, ",") != strings.Join([]string{handles[2], handles[1], handles[0]}, ",") {
		t.Errorf("pages = %+v; want alice's three in two, last active first", pages)
	}

	var read []sessionMessage
	for _, p := range sessionPages(t, alice, mcpserver.ConversationTool, map[string]any{"conversation": handles[2], "limit": 1}) {
		read = append(read, p.Messages...)
	}
	if len(read) != 2 || read[0].Role != "user" || !read[0].Trimmed || len([]rune(read[0].Text)) != 2001 || read[1].Role != "assistant" {
		t.Errorf("read = %+v", read)
	}

	// Bob gets for Alice's conversation what he gets for one never given.
	theirs := call(t, bob, mcpserver.ConversationTool, map[string]any{"conversation": handles[0]}, nil)
	if !theirs.IsError || firstText(theirs) != agent.UserMessage(agent.ErrUnknownConversation) {
		t.Errorf("another client's conversation: %v", texts(theirs))
	}
	if bobs := sessionPages(t, bob, mcpserver.ConversationsTool, nil); len(bobs) != 1 || len(bobs[0].Conversations) != 1 {
		t.Errorf("bob lists %+v", bobs)
	}
	for _, args := range []map[string]any{{"cursor": "forged"}, {"limit": 0}, {"cursor": pages[0].NextCursor, "conversation": handles[0]}} {
		tool := mcpserver.ConversationsTool
		if args["conversation"] != nil {
			tool = mcpserver.ConversationTool // a list cursor is not a messages cursor
		}
		if res := call(t, alice, tool, args, nil); !res.IsError {
			t.Errorf("%s %v accepted", tool, args)
		}
	}
}
