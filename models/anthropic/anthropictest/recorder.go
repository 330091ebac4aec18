package anthropictest

import (
	"context"
	"net/http"

	"github.com/deskhand/deskhand/models/modeltest"
)

// Call is one HTTP request the fake received.
type Call = modeltest.Call

// Recorder keeps what a fake received (modeltest.Recorder), with the
// message requests decoded. The zero value is ready to use.
type Recorder struct {
	modeltest.Recorder[Request]
}

// MessageRequests returns the POST /v1/messages bodies that could be read,
// decoded, in order (including those refused, for example for an unknown
// model or a missing key).
func (r *Recorder) MessageRequests() []Request { return r.Requests() }

// MessageCalls returns the POST /v1/messages requests as received, in
// order, for assertions on headers and on the exact wire format.
func (r *Recorder) MessageCalls() []Call { return r.CallsTo(http.MethodPost, "/v1/messages") }

// WaitMessageRequests waits until at least n message requests were
// received, or ctx ends (then it returns ctx's error).
func (r *Recorder) WaitMessageRequests(ctx context.Context, n int) error {
	return r.WaitRequests(ctx, n)
}
