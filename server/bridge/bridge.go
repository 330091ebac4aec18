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

// Bridge relays one stdio client to one HTTP endpoint.
type Bridge struct {
	URL    string
	Token  string
	Client *http.Client
	Log    *slog.Logger

	out sync.Mutex // one message at a time on stdout
	w   io.Writer

	ctx  context.Context // Run's, for the GET stream
	work sync.WaitGroup  // POSTs and the GET stream in flight

	mu        sync.Mutex
	sessionID string
	version   string // negotiated at initialize (legacy era)
	listening bool
}

// Run relays until in ends or ctx is done. Each message from the client is
// POSTed on its own, since a call may stay open while the client answers
// a question the server asks on it.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	b.w = out
	if b.Client == nil {
		b.Client = http.DefaultClient
	}
	if b.Log == nil {
		b.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(ctx)
	b.ctx = ctx
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
	b.closeSession()
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
		return err
	}
	b.headers(req, env)
	resp, err := b.Client.Do(req)
	if err != nil {
		return fmt.Errorf("Deskhand is not answering at %s: %w", b.URL, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.sessionID = sid
		b.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return errors.New("Deskhand refused this client's token (revoked?): connect the client again")
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		return b.relayCall(ctx, resp.Body, env)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
	if err != nil {
		return err
	}
	if env.Method == string(mcp.MethodInitialize) {
		b.initialized(ctx, body)
	}
	if len(bytes.TrimSpace(body)) > 0 && json.Valid(body) {
		b.write(body)
		return nil
	}
	return fmt.Errorf("Deskhand answered %s: %s", resp.Status, bytes.TrimSpace(body))
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
	for attempt := 0; ; attempt++ {
		if err := b.relayStream(body, st); err != nil || st.answered || len(st.want) == 0 || st.lastID == "" {
			return err
		}
		if attempt == maxResumes {
			return fmt.Errorf("the answer's stream ended %d times before the answer", maxResumes+1)
		}
		select {
		case <-time.After(st.retry):
		case <-ctx.Done():
			return ctx.Err()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
		if err != nil {
			return err
		}
		b.headers(req, envelope{})
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", st.lastID)
		resp, err := b.Client.Do(req)
		if err != nil {
			return fmt.Errorf("Deskhand is not answering at %s: %w", b.URL, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("resuming the answer's stream: Deskhand answered %s", resp.Status)
		}
		body = resp.Body
	}
}

// streamState follows a call's stream: the last event id, the retry the
// server asked for, and whether the answer (want, the call's id) came.
type streamState struct {
	want     json.RawMessage
	lastID   string
	retry    time.Duration
	answered bool
}

// relayStream copies each SSE event's data, a JSON-RPC message, to the
// client, noting in st (when set) what resuming needs.
func (b *Bridge) relayStream(r io.Reader, st *streamState) error {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), maxLine)
	var data []byte
	flush := func() {
		if len(data) == 0 {
			return
		}
		b.write(data)
		if st != nil && len(st.want) > 0 {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(data, &msg) == nil && msg.Method == "" && bytes.Equal(bytes.TrimSpace(msg.ID), st.want) {
				st.answered = true
			}
		}
		data = nil
	}
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case st != nil && strings.HasPrefix(line, "id:"):
			st.lastID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case st != nil && strings.HasPrefix(line, "retry:"):
			if ms, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "retry:"))); err == nil && ms >= 0 {
				st.retry = time.Duration(ms) * time.Millisecond
			}
		case line == "":
			flush()
		}
	}
	flush()
	return scanner.Err()
}

func (b *Bridge) write(msg []byte) {
	b.out.Lock()
	defer b.out.Unlock()
	_, _ = b.w.Write(append(bytes.TrimSpace(msg), '\n'))
}

// replyError answers a client request the bridge could not deliver, so the
// client is not left waiting.
func (b *Bridge) replyError(msg []byte, err error) {
	var env envelope
	if json.Unmarshal(msg, &env) != nil || len(env.ID) == 0 || env.Method == "" {
		return // a notification or a response: nobody waits for it
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env.ID,
		"error": map[string]any{"code": mcp.INTERNAL_ERROR, "message": err.Error()}})
	b.write(out)
}

// closeSession ends the legacy session when the client goes.
func (b *Bridge) closeSession() {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, b.URL, nil)
	if err != nil {
		return
	}
	b.headers(req, envelope{})
	if resp, err := b.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}
