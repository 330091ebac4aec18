package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultBodyTimeout is how long a request body may take to arrive once
// its headers are in. Bodies are at most MaxBodyBytes and come from this
// computer, where they take milliseconds; 30 s still lets a whole 4 MiB
// body through a 1.1 Mbit/s link (an allow-listed remote host). A client
// that trickles its body is cut off then, and the request slot it holds
// is freed.
const DefaultBodyTimeout = 30 * time.Second

// bodyTimeout is Options.BodyTimeout with its default; 0: none.
func (s *Server) bodyTimeout() time.Duration {
	switch {
	case s.opts.BodyTimeout == 0:
		return DefaultBodyTimeout
	case s.opts.BodyTimeout < 0:
		return 0
	}
	return s.opts.BodyTimeout
}

// bodyDeadline gives a request's body timeout to arrive, counted from the
// end of its headers: a read deadline on the connection while the body is
// read, cleared at the body's end, so that the long-lived response that
// may follow (an event stream waiting on a person, subscriptions/listen)
// is not cut. A read that misses it fails with an errSlowBody, which
// bodyReadFailed answers 408 for. http.Server.ReadTimeout is not used: it
// gives no answer, and before Go 1.26 net/http's background read after
// the body hit it and cancelled the request.
//
// It comes first, ahead of the guard, since the guard reads chunked
// bodies itself; it reads nothing.
func bodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
	if timeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
			next.ServeHTTP(w, r) // not net/http's writer: nothing to bound
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, timeout: timeout, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline at the end of the body and says
// what a missed deadline means.
type deadlineBody struct {
	io.ReadCloser
	timeout time.Duration
	rc      *http.ResponseController
	read    bool // to its end: the deadline is cleared
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.read:
		b.read = true
		// Go 1.26's net/http clears it too, when it starts its
		// background read at the body's end; this does not rely on it.
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &errSlowBody{timeout: b.timeout, err: err}
	}
	return n, err
}

// errSlowBody is a body that did not arrive within its timeout.
type errSlowBody struct {
	timeout time.Duration
	err     error
}

func (e *errSlowBody) Error() string {
	return fmt.Sprintf("the request body did not arrive within %s of its headers", e.timeout)
}

func (e *errSlowBody) Unwrap() error { return e.err }

// bodyReadFailed answers a request whose body could not be read: 408 when
// it came too slowly, 400 otherwise.
func bodyReadFailed(w http.ResponseWriter, err error) {
	if slow, ok := errors.AsType[*errSlowBody](err); ok {
		w.Header().Set("Connection", "close")
		http.Error(w, "Request Timeout: "+slow.Error(), http.StatusRequestTimeout)
		return
	}
	http.Error(w, "Bad request: could not read the body", http.StatusBadRequest)
}

// readRequest reads a POST's body whole, within the body deadline, so
// that a body too slow is answered 408 before anything else waits on it.
func (s *Server) readRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		// The guard refused longer bodies; this is a second bound.
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes))
		if err != nil {
			bodyReadFailed(w, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
