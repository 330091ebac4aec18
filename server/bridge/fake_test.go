package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/bridge"
)

// running is a Bridge relaying between pipes and a fake Deskhand.
type running struct {
	in     *io.PipeWriter // what the client writes
	out    *bufio.Reader  // what the client reads
	cancel context.CancelFunc
	done   chan error // Run's result
}

// run starts a Bridge to url; the test's cleanup ends it.
func run(t *testing.T, url string) *running {
	t.Helper()
	return runAs(t, url, "")
}

// runAs is run with a client's token.
func runAs(t *testing.T, url, token string) *running {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	r := &running{in: inW, out: bufio.NewReader(outR), cancel: cancel, done: make(chan error, 1)}
	go func() {
		b := &bridge.Bridge{URL: url, Token: token}
		r.done <- b.Run(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		outR.Close()
		<-r.done
	})
	return r
}

// send writes one line from the client and returns the bridge's next line.
func (r *running) send(t *testing.T, msg string) string {
	t.Helper()
	if _, err := io.WriteString(r.in, msg+"\n"); err != nil {
		t.Fatalf("write to the bridge: %v", err)
	}
	line, err := r.out.ReadString('\n')
	if err != nil {
		t.Fatalf("read from the bridge: %v", err)
	}
	return line
}

// TestBridgeRelaysAMultiLineEvent: a message whose SSE data spans lines
// reaches the stdio client whole, on one line (stdio frames messages by
// newlines).
func TestBridgeRelaysAMultiLineEvent(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\ndata:   \"jsonrpc\": \"2.0\",\ndata:   \"id\": 1,\ndata:   \"result\": {\"text\": \"a b\"}\ndata: }\n\n")
	}))
	defer hs.Close()
	r := run(t, hs.URL)
	line := r.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"text":"a b"}}` + "\n"; line != want {
		t.Errorf("the client got %q, want %q", line, want)
	}
}

// TestBridgeDeleteHonoursCancellation: the DELETE that ends the session
// when the client goes stops when the bridge's context is cancelled, even
// if Deskhand never answers it.
func TestBridgeDeleteHonoursCancellation(t *testing.T) {
	deleting := make(chan struct{})
	aborted := make(chan struct{})
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
		case http.MethodDelete:
			close(deleting)
			select { // a Deskhand that never answers
			case <-r.Context().Done():
				close(aborted)
			case <-release:
			}
		default:
			http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
		}
	}))
	defer hs.Close()
	defer close(release)
	r := run(t, hs.URL)
	line := r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	var res struct {
		Result struct{ ProtocolVersion string }
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil || res.Result.ProtocolVersion == "" {
		t.Fatalf("initialize answered %q (%v)", line, err)
	}
	r.in.Close() // the client goes: the bridge ends the session
	<-deleting
	r.cancel()
	// Well under the bridge's own 5 s bound on the DELETE: only the
	// cancellation can end it this soon.
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run is still waiting for the DELETE after its context was cancelled")
	}
	<-aborted
}
