package mcpserver_test

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// TestPausedCallsAreToldSo: while the person has paused serving, the list
// holds no agent, and a client calling one it listed before is told that
// Deskhand is paused (a tool error), not "tool not found"; resuming
// serves it again. Both eras.
func TestPausedCallsAreToldSo(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("paused-"+era))
			h.core.Settings().SetPaused(true)
			defer h.core.Settings().SetPaused(false)
			list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if tool.Name == "assistant" {
					t.Errorf("the paused server lists %q", tool.Name)
				}
			}
			res, err := tryCall(t.Context(), c, "assistant", map[string]any{"message": "hello"}, nil)
			if err != nil {
				t.Fatalf("a call while paused is a protocol error: %v", err)
			}
			if !res.IsError || firstText(res) != agent.PausedMessage {
				t.Fatalf("a call while paused got %v (error %v), want %q", texts(res), res.IsError, agent.PausedMessage)
			}
			res, err = tryCall(t.Context(), c, "no-such-agent", map[string]any{"message": "hello"}, nil)
			if err == nil && !res.IsError {
				t.Errorf("an unknown tool ran while paused: %v", texts(res))
			}
			h.core.Settings().SetPaused(false)
			if res := call(t, c, "assistant", map[string]any{"message": "hello"}, nil); res.IsError {
				t.Errorf("after resuming: %v", texts(res))
			}
		})
	}
}
