package openai_test

import (
	"fmt"
	"testing"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

// TestConformance runs the adapters' shared scenarios against the
// OpenAI-compatible wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: func(t *testing.T, s modeltest.Script) (agent.Model, modeltest.Fake) {
		var replies []openaitest.Reply
		for _, r := range s.Replies {
			reply := openaitest.Reply{Content: r.Text, PromptTokens: r.InputTokens, CompletionTokens: r.OutputTokens}
			for i, c := range r.ToolCalls {
				reply.ToolCalls = append(reply.ToolCalls, openaitest.ToolCall{ID: fmt.Sprintf("call_%08d", i), Name: c.Name, Arguments: c.Arguments})
			}
			replies = append(replies, reply)
		}
		srv := openaitest.NewServer(t, openaitest.WithReplies(replies...), openaitest.WithChunkDelay(s.Delay), openaitest.WithAPIKey(s.Key))
		var opts []openai.Option
		if s.ClientKey != "" {
			opts = append(opts, openai.WithAPIKey(s.ClientKey))
		}
		return newModel(t, srv, opts...), srv
	}})
}
