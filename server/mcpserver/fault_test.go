package mcpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// TestOllamaDiesMidStream: when Ollama's connection dies while it streams
// an answer, the call gets a clear tool error, the history keeps the
// question but no half answer, and the conversation carries on once
// Ollama is back.
func TestOllamaDiesMidStream(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(150*time.Millisecond))
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("victim"))
	first := handleOf(t, call(t, c, "assistant", map[string]any{"message": "Remember: the door is blue."}, nil))

	events := h.core.Events().Subscribe(t.Context(), agent.EventDelta)
	done := goCall(t.Context(), c, "assistant", map[string]any{"message": "a b c d e f g h", "conversation": first})
	select { // a chunk of the answer is out
	case <-events:
	case r := <-done:
		t.Fatalf("the call ended before the model streamed: %v %v", r.res, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the model never streamed")
	}
	h.ollama.CloseClientConnections() // Ollama dies mid-stream
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if res := r.res; !res.IsError || !strings.Contains(firstText(res), "Ollama stopped in the middle of its answer") {
		t.Fatalf("the call answered %v, want a tool error about Ollama", texts(res))
	}

	msgs, err := h.db.Messages(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != agent.RoleUser || last.Content != "a b c d e f g h" {
		t.Errorf("history ends with %s %q, want the question and no half answer", last.Role, last.Content)
	}
	turns, _ := h.db.Turns(t.Context(), first)
	if got := turns[len(turns)-1].Status; got != agent.TurnFailed {
		t.Errorf("the cut turn is %s, want failed", got)
	}

	// Ollama is back: the conversation carries on, with everything kept.
	again := call(t, c, "assistant", map[string]any{"message": "What colour is the door?", "conversation": first}, nil)
	if again.IsError || !strings.Contains(firstText(again), "door is blue") {
		t.Errorf("after Ollama came back: %v", texts(again))
	}
}
