package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Serve starts h on an httptest.Server that closes when the test ends.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Base is the part of a provider's fake that is the same whatever the
// wire: the recorders it feeds and the pace of its streams. A fake embeds
// it in its configuration; its options set Delay and add recorders.
type Base[Req any] struct {
	Recorders []*Recorder[Req]
	// Delay is waited before each frame of a stream (see [Stream.Send]).
	Delay time.Duration
}

// Receive reads r's body (up to 64 MiB), records the call and puts the
// body back for the handler to read again.
func (b *Base[Req]) Receive(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	call := Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	for _, rec := range b.Recorders {
		rec.AddCall(call)
	}
	return body, nil
}

// Record records a model request, decoded in the provider's terms.
func (b *Base[Req]) Record(req Req) {
	for _, rec := range b.Recorders {
		rec.AddRequest(req)
	}
}

// Stream answers 200 with header (its Content-Type among it) and returns
// the stream to write the reply's frames to, paced by Delay.
func (b *Base[Req]) Stream(w http.ResponseWriter, r *http.Request, header http.Header) *Stream {
	return NewStream(w, r, header, b.Delay)
}

// NewStream answers 200 with header and returns the stream to write a
// reply's frames to, each after delay.
func NewStream(w http.ResponseWriter, r *http.Request, header http.Header, delay time.Duration) *Stream {
	for k, v := range header {
		w.Header()[k] = v
	}
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	rc.Flush()
	return &Stream{w: w, rc: rc, ctx: r.Context(), delay: delay}
}

// Done records a stream that ended early because the client went away
// (ok is false) as aborted.
func (b *Base[Req]) Done(ok bool) {
	if ok {
		return
	}
	for _, rec := range b.Recorders {
		rec.AddAborted()
	}
}

// Stream is a streamed reply being written. Each method reports false
// once the client has gone away.
type Stream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	ctx   context.Context
	delay time.Duration
}

// Send waits the delay, then writes one frame, as the provider frames it
// ([NDJSON], [SSE]), and flushes it.
func (s *Stream) Send(frame []byte) bool {
	if !Pause(s.ctx, s.delay) {
		return false
	}
	if _, err := s.w.Write(frame); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// Cut closes the connection in the middle of the reply, as a server that
// crashed does.
func (s *Stream) Cut() bool {
	if conn, _, err := s.rc.Hijack(); err == nil {
		conn.Close()
		return true
	}
	panic(http.ErrAbortHandler) // makes the server drop the connection
}

// Frame is one frame of a streamed reply; a Piece carries part of the
// answer (text, thinking, a tool call), the others frame it.
type Frame struct {
	Data  []byte
	Piece bool
}

// Frames is a streamed reply: Body, then Tail, which ends a reply that
// completes. A reply scripted to break off does so after the first piece
// of Body (or, with none, before Tail): Cut closes the connection, else
// Fail is sent instead of the rest.
type Frames struct {
	Body, Tail []Frame
	Cut        bool
	Fail       []Frame
}

// Broken reports whether the reply breaks off.
func (f Frames) Broken() bool { return f.Cut || f.Fail != nil }

// Play sends f; false if the client went away first.
func (s *Stream) Play(f Frames) bool {
	brk := func() bool {
		if f.Cut {
			return s.Cut()
		}
		return s.sendAll(f.Fail)
	}
	pieces := 0
	for _, fr := range f.Body {
		if !s.Send(fr.Data) {
			return false
		}
		if fr.Piece {
			pieces++
		}
		if pieces == 1 && fr.Piece && f.Broken() {
			return brk()
		}
	}
	if f.Broken() {
		return brk()
	}
	return s.sendAll(f.Tail)
}

func (s *Stream) sendAll(frames []Frame) bool {
	for _, fr := range frames {
		if !s.Send(fr.Data) {
			return false
		}
	}
	return true
}

// Pause waits d; false if ctx ended first (or had ended).
func Pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// JSON is v marshalled; it panics if v does not marshal (a fake's own
// wire types always do).
func JSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: %T does not marshal: %v", v, err))
	}
	return b
}

// NDJSON frames v as one line of newline-delimited JSON.
func NDJSON(v any) []byte { return append(JSON(v), '\n') }

// SSE frames data as a server-sent event: "event: " line when event is
// set, one "data: " line and the blank line that ends the event.
func SSE(event string, data []byte) []byte {
	var b bytes.Buffer
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	fmt.Fprintf(&b, "data: %s\n\n", data)
	return b.Bytes()
}

// WriteJSON answers status with v as JSON, sent as contentType.
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// WriteRaw answers status with body as it is, sent as application/json
// (a server's error in a shape of its own).
func WriteRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}
