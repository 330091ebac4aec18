package openai_test

import (
	"cmp"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
)

// TestConformance runs the adapters' shared scenarios against the
// OpenAI-compatible wire format.
func TestConformance(t *testing.T) {
	httpError := modeltest.As[*openai.HTTPError](nil)
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: startOpenAI, Errors: map[modeltest.Failure]modeltest.Want{
		modeltest.FailKey: {Says: "The OpenAI-compatible server at {base} did not accept the API key (it is wrong, revoked, or lacks access) — set the right one in Settings → Models",
			Is: openai.ErrUnauthorized, Check: httpError},
		modeltest.FailModel: {Says: "model 'no-such-model-7f3a' is not available at the OpenAI-compatible server at {base}; it has: gpt-4o-mini — pick one in the agent's settings",
			Is: openai.ErrModelNotFound, Check: httpError},
		modeltest.FailRateLimit: {Says: "The OpenAI-compatible server at {base} is rate limiting Deskhand (tried again once): it asks to wait 10ms before calling again",
			Is: openai.ErrRateLimited, Check: httpError},
		modeltest.FailServer: {Says: "The OpenAI-compatible server at {base} failed (HTTP 500): The server had an error while processing your request.",
			Is: openai.ErrServerFailed, Check: httpError},
		modeltest.FailMidStream: {Says: "The OpenAI-compatible server at {base} failed while answering: The server had an error while answering.",
			Is: openai.ErrServerFailed, Check: httpError},
		modeltest.FailCut: {Says: "The OpenAI-compatible server at {base} stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
			Is: openai.ErrStreamCut},
		modeltest.FailDown: {Says: "The OpenAI-compatible server at {base} is not reachable — is it running? Start it, or change the provider's base URL in Settings → Models",
			Is: openai.ErrUnreachable},
	}})
}

// startOpenAI scripts the fake OpenAI-compatible server as s says.
func startOpenAI(t *testing.T, s modeltest.Script) (modeltest.Model, modeltest.Fake) {
	var opts []openai.Option
	if s.ClientKey != "" {
		opts = append(opts, openai.WithAPIKey(s.ClientKey))
	}
	if s.Fail == modeltest.FailDown {
		m, err := openai.New("http://"+modeltest.ClosedAddr(t)+"/v1", opts...)
		if err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	var replies []openaitest.Reply
	for _, r := range s.Replies {
		reply := openaitest.Reply{Content: r.Text, PromptTokens: r.InputTokens, CompletionTokens: r.OutputTokens}
		for i, c := range r.ToolCalls {
			reply.ToolCalls = append(reply.ToolCalls, openaitest.ToolCall{ID: cmp.Or(c.ID, fmt.Sprintf("call_%08d", i)), Name: c.Name, Arguments: c.Arguments})
		}
		switch s.Fail {
		case modeltest.FailRateLimit:
			reply = openaitest.Reply{Status: http.StatusTooManyRequests, Error: openaitest.RateLimited(model), RetryAfter: 10 * time.Millisecond}
		case modeltest.FailServer:
			reply = openaitest.Reply{Status: http.StatusInternalServerError, Error: openaitest.APIError{Message: "The server had an error while processing your request.", Type: "server_error"}}
		case modeltest.FailMidStream:
			reply.StreamError = openaitest.APIError{Message: "The server had an error while answering.", Type: "server_error"}
		case modeltest.FailCut:
			reply.Cut = true
		}
		replies = append(replies, reply)
	}
	if s.Fail == modeltest.FailRateLimit || s.Fail == modeltest.FailServer {
		replies = append(replies, replies...) // the SDK tries again once
	}
	srv := openaitest.NewServer(t, openaitest.WithReplies(replies...), openaitest.WithChunkDelay(s.Delay), openaitest.WithAPIKey(s.Key))
	return newModel(t, srv, opts...), srv
}
