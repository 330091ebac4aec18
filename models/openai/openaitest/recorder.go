package openaitest

import (
	"context"
	"net/http"

	"github.com/deskhand/deskhand/models/modeltest"
)

// Call is one HTTP request the fake received.
type Call = modeltest.Call

// Recorder keeps what a fake received (modeltest.Recorder), with the
// chat completion requests decoded. The zero value is ready to use.
type Recorder struct {
	modeltest.Recorder[ChatRequest]
}

// ChatRequests returns the POST /v1/chat/completions requests received,
// decoded, in order (including those refused, for example for an unknown
// model or a wrong key).
func (r *Recorder) ChatRequests() []ChatRequest { return r.Requests() }

// ChatBodies returns the raw bodies of the chat completion requests, in
// order, for assertions on the exact wire format.
func (r *Recorder) ChatBodies() [][]byte { return r.Bodies(http.MethodPost, chatPath) }

// WaitChatRequests waits until at least n chat completion requests were
// received, or ctx ends (then it returns ctx's error).
func (r *Recorder) WaitChatRequests(ctx context.Context, n int) error { return r.WaitRequests(ctx, n) }
