package ollamatest

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/ollama/ollama/api"
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
	chats   []api.ChatRequest
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

func (r *Recorder) addCall(c Call)            { r.update(func() { r.calls = append(r.calls, c) }) }
func (r *Recorder) addChat(c api.ChatRequest) { r.update(func() { r.chats = append(r.chats, c) }) }
func (r *Recorder) addAborted()               { r.update(func() { r.aborted++ }) }

// Calls returns every request received, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// ChatRequests returns the /api/chat requests received, decoded, in order
// (including those refused, for example for an unknown model).
func (r *Recorder) ChatRequests() []api.ChatRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.chats)
}

// NumCtx returns the "num_ctx" option of each /api/chat request, in
// order; 0 for a request without one.
func (r *Recorder) NumCtx() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, len(r.chats))
	for i, c := range r.chats {
		if n, ok := c.Options["num_ctx"].(float64); ok {
			out[i] = int(n)
		}
	}
	return out
}

// ChatBodies returns the raw bodies of the /api/chat requests, in order,
// for assertions on the exact wire format.
func (r *Recorder) ChatBodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, c := range r.calls {
		if c.Method == http.MethodPost && c.Path == "/api/chat" {
			out = append(out, c.Body)
		}
	}
	return out
}

// Aborted is how many streamed chat replies ended because the client went
// away (cancelled, disconnected) before the done chunk.
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

// WaitChatRequests waits until at least n /api/chat requests were
// received (as [Recorder.ChatRequests] counts them), or ctx ends (then it
// returns ctx's error).
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
