package openaitest

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
	Header http.Header
	Body   []byte // as received
}

// Recorder keeps what a fake received. The zero value is ready to use; it
// is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	calls   []Call
	chats   []ChatRequest
	aborted int
	changed chan struct{} // closed and replaced on every change
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

func (r *Recorder) addCall(c Call)        { r.update(func() { r.calls = append(r.calls, c) }) }
func (r *Recorder) addChat(c ChatRequest) { r.update(func() { r.chats = append(r.chats, c) }) }
func (r *Recorder) addAborted()           { r.update(func() { r.aborted++ }) }

// Calls returns every request received, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// ChatRequests returns the POST /v1/chat/completions requests received,
// decoded, in order (including those refused, for example for an unknown
// model or a wrong key).
func (r *Recorder) ChatRequests() []ChatRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.chats)
}

// ChatBodies returns the raw bodies of the chat completion requests, in
// order, for assertions on the exact wire format.
func (r *Recorder) ChatBodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, c := range r.calls {
		if c.Method == http.MethodPost && c.Path == chatPath {
			out = append(out, c.Body)
		}
	}
	return out
}

// Aborted is how many streamed replies ended because the client went away
// (cancelled, disconnected) before data: [DONE].
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

// WaitChatRequests waits until at least n chat completion requests were
// received, or ctx ends (then it returns ctx's error).
func (r *Recorder) WaitChatRequests(ctx context.Context, n int) error {
	return r.wait(ctx, func() bool { return len(r.chats) >= n })
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
