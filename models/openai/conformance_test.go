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
	"github.com/deskhand/deskhand/server/agent"
)

// TestConformance runs the adapters' shared scenarios against the
// OpenAI-compatible wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: startOpenAI, Errors: map[modeltest.Failure]modeltest.Want{
		modeltest.FailKey:       {Says: "did not accept the API key", Is: openai.ErrUnauthorized},
		modeltest.FailModel:     {Says: "model 'no-such-model-7f3a' is not available at", Is: openai.ErrModelNotFound},
		modeltest.FailRateLimit: {Says: "is rate limiting Deskhand (tried again once): it asks to wait 10ms", Is: openai.ErrRateLimited},
		modeltest.FailServer:    {Says: "failed (HTTP 500): The server had an error while processing your request.", Is: openai.ErrServerFailed},
		modeltest.FailMidStream: {Says: "failed while answering: The server had an error while answering.", Is: openai.ErrServerFailed},
		modeltest.FailCut:       {Says: "stopped in the middle of its answer", Is: openai.ErrStreamCut},
		modeltest.FailDown:      {Says: "is not reachable", Is: openai.ErrUnreachable},
	}})
}

// startOpenAI scripts the fake OpenAI-compatible server as s says.
func startOpenAI(t *testing.T, s modeltest.Script) (agent.Model, modeltest.Fake) {
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
