package ollama_test

import (
	"fmt"
	"testing"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

// TestConformance runs the adapters' shared scenarios against Ollama's
// wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: func(t *testing.T, s modeltest.Script) (agent.Model, modeltest.Fake) {
		var replies []ollamatest.Reply
		for _, r := range s.Replies {
			reply := ollamatest.Reply{Content: r.Text, PromptTokens: r.InputTokens, OutputTokens: r.OutputTokens}
			for i, c := range r.ToolCalls {
				reply.ToolCalls = append(reply.ToolCalls, ollamatest.ToolCall(fmt.Sprintf("call_%08d", i), c.Name, c.Arguments))
			}
			replies = append(replies, reply)
		}
		srv := ollamatest.NewServer(t, ollamatest.WithReplies(replies...), ollamatest.WithChunkDelay(s.Delay), ollamatest.WithAPIKey(s.Key))
		var opts []ollama.Option
		if s.ClientKey != "" {
			opts = append(opts, ollama.WithAPIKey(s.ClientKey))
		}
		return newModel(t, srv, opts...), srv
	}})
}
