// Package modeltest is the test kit the model adapters share. For the
// providers' fake servers (models/*/…test), which keep only their own wire
// format: the [Recorder] of what a fake received, the scripted [Replies],
// the [Base] that receives, records and paces a fake's streams ([Frames]
// framed as [NDJSON] or [SSE]), the memory [Echo] that answers by default,
// and [ServeCommand] for a fake run as a command. For the adapters' tests:
// the [Conformance] suite every adapter runs against its provider's fake;
// the runners of each adapter's own tables, in its own terms ([Chats],
// [ChatErrors], [ToolRoundTrip]); and small helpers ([ClosedAddr],
// [UserMessage], [JSONEqual], [Field]).
package modeltest

import (
	"context"
	"net/http"
	"slices"
	"sync"
)

// Call is one HTTP request a fake received.
type Call struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte // as received
}

// Recorder keeps what a fake received: every call, the model requests
// (R, decoded in the provider's format) and the streamed replies the
// client abandoned. The zero value is ready to use; it is safe for
// concurrent use.
type Recorder[R any] struct {
	mu       sync.Mutex
	calls    []Call
	requests []R
	aborted  int
	changed  chan struct{} // closed and replaced on every change
}

func (r *Recorder[R]) update(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// AddCall records a request as received.
func (r *Recorder[R]) AddCall(c Call) { r.update(func() { r.calls = append(r.calls, c) }) }

// AddRequest records a model request, decoded.
func (r *Recorder[R]) AddRequest(req R) { r.update(func() { r.requests = append(r.requests, req) }) }

// AddAborted counts a streamed reply the client went away from.
func (r *Recorder[R]) AddAborted() { r.update(func() { r.aborted++ }) }

// Calls returns every request received, in order.
func (r *Recorder[R]) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// CallsTo returns the requests received with this method and path, in
// order, for assertions on headers and on the exact wire format.
func (r *Recorder[R]) CallsTo(method, path string) []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Call
	for _, c := range r.calls {
		if c.Method == method && c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// Bodies returns the bodies of the requests received with this method
// and path, in order, for assertions on the exact wire format.
func (r *Recorder[R]) Bodies(method, path string) [][]byte {
	var out [][]byte
	for _, c := range r.CallsTo(method, path) {
		out = append(out, c.Body)
	}
	return out
}

// Requests returns the model requests received, decoded, in order
// (including those the fake refused, for an unknown model or a wrong key).
func (r *Recorder[R]) Requests() []R {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// Aborted is how many streamed replies ended because the client went away
// (cancelled, disconnected) before the stream's end.
func (r *Recorder[R]) Aborted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.aborted
}

// WaitAborted waits until at least n streamed replies were aborted, or ctx
// ends (then it returns ctx's error).
func (r *Recorder[R]) WaitAborted(ctx context.Context, n int) error {
	return r.wait(ctx, func() bool { return r.aborted >= n })
}

// WaitRequests waits until at least n model requests were received, or
// ctx ends (then it returns ctx's error).
func (r *Recorder[R]) WaitRequests(ctx context.Context, n int) error {
	return r.wait(ctx, func() bool { return len(r.requests) >= n })
}

// wait waits until done, called with r.mu held, reports true: it checks
// at every change, or until ctx ends.
func (r *Recorder[R]) wait(ctx context.Context, done func() bool) error {
	for {
		r.mu.Lock()
		if done() {
			r.mu.Unlock()
			return nil
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
