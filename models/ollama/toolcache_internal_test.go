package ollama

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestToolsBytesAreTheirJSON: the length of the tools that sizes the
// window is that of their JSON as sent, first made or cached, and the
// cache stays within its bound.
func TestToolsBytesAreTheirJSON(t *testing.T) {
	ask := agent.ToolSpec{Name: "ask_user", Description: "Ask the person.", Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"what to ask"},"choices":{"type":"array","items":{"type":"string"}}},"required":["question"]}`)}
	bare := agent.ToolSpec{Name: "current_time", Description: "The time."}
	fetch := agent.ToolSpec{Name: "fetch_url", Description: "Fetch a page.", Parameters: json.RawMessage(` {"type":"object","properties":{"url":{"type":"string"}}} `)}
	for _, tc := range []struct {
		name  string
		tools []agent.ToolSpec
	}{
		{"none", nil},
		{"one", []agent.ToolSpec{ask}},
		{"no parameters", []agent.ToolSpec{bare}},
		{"three", []agent.ToolSpec{ask, bare, fetch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pass := range []string{"made", "cached"} {
				req, toolsBytes, err := toAPIRequest(agent.ChatRequest{Model: "m", Tools: tc.tools})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				if len(req.Tools) > 0 {
					b, err := json.Marshal(req.Tools)
					if err != nil {
						t.Fatal(err)
					}
					want = len(b)
				}
				if toolsBytes != want {
					t.Errorf("%s: toolsBytes = %d, want %d (the JSON's length)", pass, toolsBytes, want)
				}
			}
		})
	}
	for i := range 2*maxCachedTools + 1 {
		if _, _, err := apiTools.get(agent.ToolSpec{Name: fmt.Sprintf("t%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	apiTools.mu.Lock()
	n := len(apiTools.m)
	apiTools.mu.Unlock()
	if n > maxCachedTools {
		t.Errorf("%d tools cached, want at most %d", n, maxCachedTools)
	}
}
