package anthropic_test

import (
	"cmp"
	"testing"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/server/agent"
)

// TestConformance runs the adapters' shared scenarios against Anthropic's
// wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: func(t *testing.T, s modeltest.Script) (agent.Model, modeltest.Fake) {
		var replies []anthropictest.Reply
		for _, r := range s.Replies {
			reply := anthropictest.Reply{Text: r.Text, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
			for _, c := range r.ToolCalls {
				reply.ToolUses = append(reply.ToolUses, anthropictest.ToolUse{Name: c.Name, Input: c.Arguments})
			}
			replies = append(replies, reply)
		}
		srv := anthropictest.NewServer(t, anthropictest.WithReplies(replies...), anthropictest.WithEventDelay(s.Delay), anthropictest.WithAPIKey(s.Key))
		m, err := anthropic.New(srv.URL, cmp.Or(s.ClientKey, key), anthropic.WithHTTPClient(srv.Client()), anthropic.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return m, srv
	}})
}
