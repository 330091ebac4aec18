// Package bridge relays MCP between a stdio client and the running
// Deskhand's HTTP endpoint, so a client that only speaks stdio (Claude
// Desktop) reaches the app itself: its conversations, its popups. The
// bridge sends the client's own token, taken from the keychain by main,
// never from argv or the client's config.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxLine bounds one JSON-RPC message from the client (the server's own
// limit is 4 MiB).
const maxLine = 8 << 20

// Timeouts of the client NewClient makes. None bounds a whole response:
// a call's event stream may stay open for as long as its agent works.
const (
	dialTimeout = 5 * time.Second // Deskhand is on this computer
	// headerTimeout bounds the wait for a response's headers. Deskhand
	// opens a waiting call's event stream within its keep-alive interval
	// (15 s by default), and answers everything else at once.
	headerTimeout = time.Minute
	// deleteTimeout bounds ending the session when the client goes.
	deleteTimeout = 5 * time.Second
)

// NewClient returns the HTTP client a Bridge uses when given none: it
// bounds connecting and waiting for headers, never a response's body.
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = dialTimeout
	tr.ResponseHeaderTimeout = headerTimeout
	return &http.Client{Transport: tr}
}

// StatusError is an HTTP status Deskhand answered a message with, instead
// of relaying it.
type StatusError struct {
	Status int    // the HTTP status code
	Detail string // what to do about it, for a person
}

func (e *StatusError) Error() string { return e.Detail }

// ErrorData is the data of the JSON-RPC error the bridge answers a client
// request with when it could not relay it. HTTPStatus is the status
// Deskhand answered with, when it answered: 401 means it refused the
// token, which ui/connect tells from other failures by this field.
type ErrorData struct {
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// Bridge relays one stdio client to one HTTP endpoint.
type Bridge struct {
	URL    string
	Token  string
	Client *http.Client
	Log    *slog.Logger

	out sync.Mutex // one message at a time on stdout
	w   io.Writer

	work sync.WaitGroup // POSTs and the GET stream in flight

	mu        sync.Mutex
	sessionID string
	version   string // negotiated at initialize (legacy era)
	listening bool
}

// Run relays until in ends, then ends the legacy session. Each message
// from the client is POSTed on its own, since a call may stay open while
// the client answers a question the server asks on it. When ctx is done,
// the calls in flight and the session's DELETE stop at once, but Run
// returns only once in ends: a blocked read cannot be interrupted.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	b.w = out
	if b.Client == nil {
		b.Client = NewClient()
	}
	if b.Log == nil {
		b.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel() // calls still open end with the client
		b.work.Wait()
	}()
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64<<10), maxLine)
	for scanner.Scan() {
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		b.work.Add(1)
		go func() {
			defer b.work.Done()
			if err := b.post(ctx, msg); err != nil && ctx.Err() == nil {
				b.Log.Warn("relay a message to Deskhand", "err", err)
				b.replyError(msg, err)
			}
		}()
	}
	b.closeSession(ctx)
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("read from the client: %w", err)
	}
	return nil
}

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// post sends one client message and relays what comes back.
func (b *Bridge) post(ctx context.Context, msg []byte) error {
	var env envelope
	if err := json.Unmarshal(msg, &env); err != nil {
		return fmt.Errorf("the client sent something that is not JSON-RPC: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		return fmt.Errorf("build the POST to %s: %w", b.URL, err)
	}
	b.headers(req, env)
	resp, err := b.Client.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from Deskhand at %s: %w", b.URL, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.sessionID = sid
		b.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return &StatusError{Status: resp.StatusCode, Detail: "Deskhand refused this client's token (revoked?): connect the client again"}
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		return b.relayCall(ctx, resp.Body, env)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
	if err != nil {
		return fmt.Errorf("read Deskhand's answer: %w", err)
	}
	if env.Method == string(mcp.MethodInitialize) {
		b.initialized(ctx, body)
	}
	if len(bytes.TrimSpace(body)) > 0 && json.Valid(body) {
		b.write(body)
		return nil
	}
	return fmt.Errorf("unexpected answer from Deskhand (%s): %s", resp.Status, bytes.TrimSpace(body))
}

// headers are what Streamable HTTP wants besides the body.
func (b *Bridge) headers(req *http.Request, env envelope) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if b.Token != "" {
		req.Header.Set("Authorization", "Bearer "+b.Token)
	}
	b.mu.Lock()
	sid, version := b.sessionID, b.version
	b.mu.Unlock()
	if v := metaVersion(env.Params); mcp.IsModernProtocol(v) {
		req.Header.Set("Mcp-Protocol-Version", v)
		for k, val := range mcp.StandardHeaders(v, mcp.MCPMethod(env.Method), env.Params) {
			req.Header.Set(k, val)
		}
		return
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
}

func metaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	v, _ := p.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	return v
}

// initialized notes the legacy session's version and opens its GET stream,
// where the server sends sampling requests.
func (b *Bridge) initialized(ctx context.Context, body []byte) {
	var res struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &res) != nil || res.Result.ProtocolVersion == "" {
		return
	}
	b.mu.Lock()
	b.version = res.Result.ProtocolVersion
	start := !b.listening && b.sessionID != ""
	b.listening = true
	b.mu.Unlock()
	if start {
		b.work.Add(1)
		go func() {
			defer b.work.Done()
			b.listen(ctx)
		}()
	}
}

func (b *Bridge) listen(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	b.headers(req, envelope{})
	resp, err := b.Client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_ = b.relayStream(resp.Body, nil)
	}
}

// maxResumes bounds the reconnections for one call.
const maxResumes = 5

// relayCall relays a call's event stream. When the stream ends before the
// call's answer, it resumes it as SEP-1699 says: a GET with the last
// event's id, after the retry interval the server asked for.
func (b *Bridge) relayCall(ctx context.Context, body io.Reader, env envelope) error {
	st := &streamState{want: bytes.TrimSpace(env.ID), retry: time.Second}
	if err := b.relayStream(body, st); err != nil {
		return err
	}
	for resumes := 0; !st.done(); resumes++ {
		if resumes == maxResumes {
			return fmt.Errorf("the answer's stream ended %d times before the answer", maxResumes+1)
		}
		select {
		case <-time.After(st.retry):
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := b.resume(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// resume reconnects to a call's stream after st.lastID and relays it.
func (b *Bridge) resume(ctx context.Context, st *streamState) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
	if err != nil {
		return fmt.Errorf("build the GET to %s: %w", b.URL, err)
	}
	b.headers(req, envelope{})
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", st.lastID)
	resp, err := b.Client.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from Deskhand at %s: %w", b.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("resuming the answer's stream: Deskhand answered %s", resp.Status)
	}
	return b.relayStream(resp.Body, st)
}

// streamState follows a call's stream: the last event id, the retry the
// server asked for, and whether the answer (want, the call's id) came.
type streamState struct {
	want     json.RawMessage
	lastID   string
	retry    time.Duration
	answered bool
}

// done reports whether nothing is left to resume: the answer came, the
// message was no request, or the stream gave no id to resume after.
func (st *streamState) done() bool {
	return st.answered || len(st.want) == 0 || st.lastID == ""
}

// relayStream copies each SSE event's data, a JSON-RPC message, to the
// client, noting in st (when set) what resuming needs.
func (b *Bridge) relayStream(r io.Reader, st *streamState) error {
	return readEvents(r, func(ev event) {
		if st != nil {
			if ev.id != nil {
				st.lastID = *ev.id
			}
			if ev.retry >= 0 {
				st.retry = ev.retry
			}
		}
		if len(ev.data) == 0 {
			return // a priming event: an id, no message
		}
		b.write(ev.data)
		if st != nil && len(st.want) > 0 {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(ev.data, &msg) == nil && msg.Method == "" && bytes.Equal(bytes.TrimSpace(msg.ID), st.want) {
				st.answered = true
			}
		}
	})
}

// event is one server-sent event, as the HTML Living Standard's "event
// stream interpretation" reads it.
type event struct {
	data  []byte        // the data lines, joined with "\n"
	id    *string       // the id field, when the event had one
	retry time.Duration // the retry field; -1 when absent or not a number
}

// readEvents calls fn with each event of the stream in r that carries data,
// an id or a retry. Lines end with LF, CRLF or CR alone.
func readEvents(r io.Reader, fn func(event)) error {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), maxLine)
	scanner.Split(scanSSELines)
	ev := event{retry: -1}
	var hasData bool
	dispatch := func() {
		if hasData || ev.id != nil || ev.retry >= 0 {
			fn(ev)
		}
		ev, hasData = event{retry: -1}, false
	}
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" {
			dispatch()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: the server's keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			ev.data, hasData = append(ev.data, value...), true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.id = &value
			}
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				ev.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("read Deskhand's event stream: %w", err)
	}
	// The standard drops an event the stream ends in the middle of.
	return nil
}

// scanSSELines is bufio.ScanLines for SSE, where a line may also end with
// CR alone.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// CR: a following LF belongs to the same line end.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // wait to see whether LF follows
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// write sends msg to the client on one line, as stdio framing wants: a
// message whose data spanned lines is compacted first.
func (b *Bridge) write(msg []byte) {
	line := bytes.TrimSpace(msg)
	if bytes.ContainsAny(line, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, line); err != nil {
			b.Log.Warn("Deskhand sent a message that is not JSON; dropped", "err", err)
			return
		}
		line = buf.Bytes()
	}
	b.out.Lock()
	defer b.out.Unlock()
	_, _ = b.w.Write(append(line, '\n'))
}

// replyError answers a client request the bridge could not deliver, so the
// client is not left waiting.
func (b *Bridge) replyError(msg []byte, err error) {
	var env envelope
	if json.Unmarshal(msg, &env) != nil || len(env.ID) == 0 || env.Method == "" {
		return // a notification or a response: nobody waits for it
	}
	details := map[string]any{"code": mcp.INTERNAL_ERROR, "message": err.Error()}
	if se := (*StatusError)(nil); errors.As(err, &se) {
		details["data"] = ErrorData{HTTPStatus: se.Status}
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": details})
	b.write(out)
}

// closeSession ends the legacy session when the client goes, within
// deleteTimeout and while ctx lasts.
func (b *Bridge) closeSession(ctx context.Context) {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.URL, nil)
	if err != nil {
		b.Log.Warn("end the session", "err", err)
		return
	}
	b.headers(req, envelope{})
	resp, err := b.Client.Do(req)
	if err != nil {
		b.Log.Warn("end the session", "err", err)
		return
	}
	resp.Body.Close()
}
