package ollama_test

import (
	"net/http"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

// TestConformance runs the adapters' shared scenarios against Ollama's
// wire format.
func TestConformance(t *testing.T) {
	modeltest.Conformance(t, modeltest.Adapter{Model: model, Start: startOllama, Errors: map[modeltest.Failure]modeltest.Want{
		modeltest.FailKey: {Says: "Ollama at {base} did not accept the request: the API key is missing or wrong — set it in Settings",
			Check: modeltest.As[api.AuthorizationError](nil)},
		modeltest.FailModel: {Says: "model 'no-such-model-7f3a' is not installed — pull it with 'ollama pull no-such-model-7f3a'",
			Check: modeltest.As(func(e api.StatusError) bool { return e.StatusCode == http.StatusNotFound })},
		modeltest.FailRateLimit: {Says: "Ollama refused the request: too many requests, slow down"},
		modeltest.FailServer:    {Says: "Ollama refused the request: an error was encountered while loading the model"},
		modeltest.FailMidStream: {Says: "Ollama failed while answering: an error was encountered while running the model"},
		modeltest.FailCut: {Says: "Ollama stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
			Is: ollama.ErrStreamCut},
		modeltest.FailDown: {Says: "Ollama is not running at {base} — start it or change the host in Settings"},
	}})
}

// startOllama scripts the fake Ollama as s says.
func startOllama(t *testing.T, s modeltest.Script) (modeltest.Model, modeltest.Fake) {
	var opts []ollama.Option
	if s.ClientKey != "" {
		opts = append(opts, ollama.WithAPIKey(s.ClientKey))
	}
	if s.Fail == modeltest.FailDown {
		m, err := ollama.New(modeltest.ClosedAddr(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		return m, nil
	}
	var replies []ollamatest.Reply
	for _, r := range s.Replies {
		reply := ollamatest.Reply{Content: r.Text, PromptTokens: r.InputTokens, OutputTokens: r.OutputTokens}
		for _, c := range r.ToolCalls {
			reply.ToolCalls = append(reply.ToolCalls, ollamatest.ToolCall(c.ID, c.Name, c.Arguments))
		}
		switch s.Fail {
		case modeltest.FailRateLimit:
			reply = ollamatest.Reply{Status: http.StatusTooManyRequests, Error: "too many requests, slow down"}
		case modeltest.FailServer:
			reply = ollamatest.Reply{Status: http.StatusInternalServerError, Error: "an error was encountered while loading the model"}
		case modeltest.FailMidStream:
			reply.Error = "an error was encountered while running the model"
		case modeltest.FailCut:
			reply.Cut = true
		}
		replies = append(replies, reply)
	}
	srv := ollamatest.NewServer(t, ollamatest.WithReplies(replies...), ollamatest.WithChunkDelay(s.Delay), ollamatest.WithAPIKey(s.Key))
	return newModel(t, srv, opts...), srv
}
