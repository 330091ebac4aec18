package anthropictest

import (
	"context"
	"net/http"
	"slices"
	"sync"
)

// Call is one HTTP request the fake received.
type Call struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte // as received
}

// Recorder keeps what a fake received. The zero value is ready to use; it
// is safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	calls    []Call
	messages []Request
	aborted  int
	changed  chan struct{} // closed and replaced on every change
}

func (r *Recorder) update(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *Recorder) addCall(c Call)         { r.update(func() { r.calls = append(r.calls, c) }) }
func (r *Recorder) addMessage(req Request) { r.update(func() { r.messages = append(r.messages, req) }) }
func (r *Recorder) addAborted()            { r.update(func() { r.aborted++ }) }

// Calls returns every request received, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// MessageRequests returns the POST /v1/messages bodies that could be read,
// decoded, in order (including those refused, for example for an unknown
// model or a missing key).
func (r *Recorder) MessageRequests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.messages)
}

// MessageCalls returns the POST /v1/messages requests as received, in
// order, for assertions on headers and on the exact wire format.
func (r *Recorder) MessageCalls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Call
	for _, c := range r.calls {
		if c.Method == http.MethodPost && c.Path == "/v1/messages" {
			out = append(out, c)
		}
	}
	return out
}

// Aborted is how many streamed replies ended because the client went away
// (cancelled, disconnected) before message_stop.
func (r *Recorder) Aborted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.aborted
}

// WaitAborted waits until at least n streamed replies were aborted, or ctx
// ends (then it returns ctx's error).
func (r *Recorder) WaitAborted(ctx context.Context, n int) error {
	return r.wait(ctx, func() bool { return r.aborted >= n })
}

// WaitMessageRequests waits until at least n POST /v1/messages requests
// were received (as [Recorder.MessageRequests] counts them), or ctx ends
// (then it returns ctx's error).
func (r *Recorder) WaitMessageRequests(ctx context.Context, n int) error {
	return r.wait(ctx, func() bool { return len(r.messages) >= n })
}

// wait waits until done, called with r.mu held, reports true: it checks
// at every change, or until ctx ends.
func (r *Recorder) wait(ctx context.Context, done func() bool) error {
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
