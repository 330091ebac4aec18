package ollamatest

import (
	"context"
	"net/http"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/modeltest"
)

// Call is one HTTP request the fake received.
type Call = modeltest.Call

// Recorder keeps what a fake received (modeltest.Recorder), with the
// /api/chat requests decoded. The zero value is ready to use.
type Recorder struct {
	modeltest.Recorder[api.ChatRequest]
}

// ChatRequests returns the /api/chat requests received, decoded, in order.
func (r *Recorder) ChatRequests() []api.ChatRequest { return r.Requests() }

// NumCtx returns the "num_ctx" option of each /api/chat request, in
// order; 0 for a request without one.
func (r *Recorder) NumCtx() []int {
	chats := r.Requests()
	out := make([]int, len(chats))
	for i, c := range chats {
		if n, ok := c.Options["num_ctx"].(float64); ok {
			out[i] = int(n)
		}
	}
	return out
}

// ChatBodies returns the raw bodies of the /api/chat requests, in order,
// for assertions on the exact wire format.
func (r *Recorder) ChatBodies() [][]byte { return r.Bodies(http.MethodPost, "/api/chat") }

// WaitChatRequests waits until at least n chat requests were received, or
// ctx ends (then it returns ctx's error).
func (r *Recorder) WaitChatRequests(ctx context.Context, n int) error { return r.WaitRequests(ctx, n) }
