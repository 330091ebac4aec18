package mcpfill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxProgressTokenBytes bounds a request's progress token
// (params._meta.progressToken), in bytes of its JSON encoding: every
// progress notification of the call repeats the token, and a resumable
// stream keeps them. Clients send counters or ids (mcp-go a number, other
// SDKs a UUID of 38 bytes quoted); 256 bytes leaves room for any of them.
const MaxProgressTokenBytes = 256

// BodyDeadline gives a request's body timeout to arrive, counted from the
// end of its headers: a read deadline on the connection while the body is
// read, cleared at the body's end, so that the long-lived response that
// may follow (an event stream waiting on a person, subscriptions/listen)
// is not cut. A read that misses it fails with an error BodyReadFailed
// answers 408 for. http.Server.ReadTimeout is not used: it gives no
// answer, and whether net/http's background read after the body can hit
// it, cancelling the request, depends on the release (Go 1.26 clears it
// first). A timeout of 0 or less bounds nothing.
//
// It comes first, ahead of anything that reads bodies; it reads nothing.
func BodyDeadline(timeout time.Duration, next http.Handler) http.Handler {
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

// BodyReadFailed answers a request whose body could not be read: 408 when
// it came too slowly (BodyDeadline), 400 otherwise.
func BodyReadFailed(w http.ResponseWriter, err error) {
	if slow, ok := errors.AsType[*errSlowBody](err); ok {
		w.Header().Set("Connection", "close")
		http.Error(w, "Request Timeout: "+slow.Error(), http.StatusRequestTimeout)
		return
	}
	http.Error(w, "Bad request: could not read the body", http.StatusBadRequest)
}

// ReadRequest reads a POST's body whole, at most maxBytes of it, and
// refuses a request whose progress token is over MaxProgressTokenBytes
// before anything else sees it.
func ReadRequest(maxBytes int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBytes))
		if err != nil {
			BodyReadFailed(w, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if id, size, over := oversizedProgressToken(body); over {
			WriteErrorStatus(w, ErrorStatus(r), id, mcp.INVALID_PARAMS,
				fmt.Sprintf("params._meta.progressToken is %d bytes of JSON; the limit is %d bytes", size, MaxProgressTokenBytes),
				map[string]any{"limit": MaxProgressTokenBytes})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// mayNameProgressToken reports whether a key of body could decode to
// "progressToken" in any case: it holds the word in some case, or an
// escape, which could spell it.
func mayNameProgressToken(body []byte) bool {
	const word = "progresstoken"
	if bytes.IndexByte(body, '\\') >= 0 {
		return true
	}
	for i := 0; i+len(word) <= len(body); i++ {
		if c := body[i]; (c == 'p' || c == 'P') && bytes.EqualFold(body[i:i+len(word)], []byte(word)) {
			return true
		}
	}
	return false
}

// oversizedProgressToken finds a request whose progress token is over
// MaxProgressTokenBytes, with its id and the token's size. Every key of
// _meta that encoding/json could take for "progressToken" counts (it
// matches case-insensitively, mcp-go exactly; with repeated keys, the last
// wins), so that none slips past.
func oversizedProgressToken(body []byte) (id json.RawMessage, size int, over bool) {
	if !mayNameProgressToken(body) {
		return nil, 0, false // most requests: no decoding
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "" || len(msg.ID) == 0 || len(msg.Params.Meta) == 0 {
		return nil, 0, false // not a request with _meta; mcp-go answers what is malformed
	}
	dec := json.NewDecoder(bytes.NewReader(msg.Params.Meta))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, 0, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, 0, false
		}
		if k, _ := key.(string); !strings.EqualFold(k, "progressToken") || len(value) <= MaxProgressTokenBytes {
			continue
		}
		if value[0] != '{' && value[0] != '[' { // a string or number: as compact as it gets
			return msg.ID, len(value), true
		}
		var compact bytes.Buffer
		if json.Compact(&compact, value) == nil && compact.Len() > MaxProgressTokenBytes {
			return msg.ID, compact.Len(), true
		}
	}
	return nil, 0, false
}
