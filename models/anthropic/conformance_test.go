package anthropic_test

import (
	"cmp"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
)

// TestConformance runs the adapters' shared scenarios against Anthropic's
// wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: startAnthropic, Errors: map[modeltest.Failure]modeltest.Want{
		modeltest.FailKey: {Says: "Anthropic did not accept the API key (invalid x-api-key) — check it in Settings",
			Check: sdkError(sdk.ErrorTypeAuthenticationError)},
		modeltest.FailModel: {Says: "Anthropic has no model 'no-such-model-7f3a' that this API key may use — choose another in the agent's settings (model: no-such-model-7f3a)",
			Check: sdkError(sdk.ErrorTypeNotFoundError)},
		modeltest.FailRateLimit: {Says: "Anthropic's rate limit for this API key was reached; try again in 30 seconds (This request would exceed your organization's rate limit of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.)",
			Check: sdkError(sdk.ErrorTypeRateLimitError)},
		modeltest.FailServer:    {Says: "Anthropic failed while answering: Internal server error", Check: sdkError(sdk.ErrorTypeAPIError)},
		modeltest.FailMidStream: {Says: "Anthropic is overloaded right now; try again in a few minutes", Check: sdkError(sdk.ErrorTypeOverloadedError)},
		modeltest.FailCut: {Says: "Anthropic's answer broke off before its end (was the connection cut?); nothing of that answer was kept, so call again",
			Is: anthropic.ErrStreamCut},
		modeltest.FailDown: {Says: "could not reach Anthropic at {base} — check the network connection or the base URL in Settings"},
	}})
}

// startAnthropic scripts the fake Anthropic API as s says.
func startAnthropic(t *testing.T, s modeltest.Script) (modeltest.Model, modeltest.Fake) {
	if s.Fail == modeltest.FailDown {
		m, err := anthropic.New("http://"+modeltest.ClosedAddr(t), cmp.Or(s.ClientKey, key), anthropic.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	var replies []anthropictest.Reply
	for _, r := range s.Replies {
		reply := anthropictest.Reply{Text: r.Text, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
		for _, c := range r.ToolCalls {
			reply.ToolUses = append(reply.ToolUses, anthropictest.ToolUse{ID: c.ID, Name: c.Name, Input: c.Arguments})
		}
		switch s.Fail {
		case modeltest.FailRateLimit:
			reply = anthropictest.RateLimited(30)
		case modeltest.FailServer:
			reply = anthropictest.ServerError
		case modeltest.FailMidStream:
			reply.StreamError = anthropictest.Overloaded.Error
		case modeltest.FailCut:
			reply.Cut = true
		}
		replies = append(replies, reply)
	}
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(replies...), anthropictest.WithEventDelay(s.Delay), anthropictest.WithAPIKey(s.Key))
	m, err := anthropic.New(srv.URL, cmp.Or(s.ClientKey, key), anthropic.WithHTTPClient(srv.Client()), anthropic.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}
