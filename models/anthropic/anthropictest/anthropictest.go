// Package anthropictest is a fake of Anthropic's Messages API for tests.
// It speaks the API's wire format as of API version 2026-10-21
// (anthropic-sdk-go v2.15.0):
//
//   - POST /v1/messages with "stream": true answers text/event-stream
//     events, each "event: <type>\ndata: <json>\n\n": message_start,
//     then for each content block content_block_start, its deltas
//     (text_delta a word at a time; thinking_delta then signature_delta;
//     input_json_delta pieces of a tool_use's input, the first one empty),
//     content_block_stop; a ping after the first block's start;
//     message_delta with stop_reason and usage; message_stop. Without
//     "stream" it answers the whole message as one JSON object.
//   - GET /v1/models (limit, after_id, before_id, has_more, first_id,
//     last_id) and GET /v1/models/{id}.
//   - Errors in Anthropic's shape,
//     {"type":"error","error":{"type":…,"message":…},"request_id":…},
//     with a request-id header: 401 authentication_error for a missing or
//     wrong key, 404 not_found_error "model: <id>" for an unknown model,
//     400 invalid_request_error for a malformed request (missing
//     max_tokens, max_tokens over the model's, empty text blocks, a tool_use
//     without its tool_result in the next message, a tool_result that
//     answers no tool_use, a tool whose input_schema is not an object, …),
//     "prompt is too long: N tokens > M maximum" when the request's words
//     exceed the model's max_input_tokens, and a structured-output schema
//     the API would refuse; scripted errors such as 429 rate_limit_error
//     with retry-after and 529 overloaded_error; and an "event: error"
//     in the middle of a stream.
//
// The formats follow the SDK's recordings of the real API and its stream
// fixtures (in the module cache after go get):
// toolrunner/testdata/cassettes/tool_runner_next_streaming.yaml (a
// streamed text + tool_use reply, with ping and input_json_delta pieces,
// and its response headers), tool_runner_basic.yaml (a whole message),
// lib/betafallback/testdata/fallbackstream/refusal.sse (thinking and
// signature deltas, stop_details), opentelemetry_stream_test.go (the
// error event and the 529 body), model.go (ModelInfo) and
// packages/pagination (Page); and the API reference at
// https://platform.claude.com/docs/en/build-with-claude/streaming and
// https://platform.claude.com/docs/en/api/errors. Refusals whose exact
// wording neither gives (a structured-output schema the API would refuse,
// a tool_result after text, a model without structured outputs) are in
// the fake's own words.
//
// Every request must carry an anthropic-version header and a key, as
// x-api-key or "Authorization: Bearer" (any key, unless [WithAPIKey] sets
// the one accepted). By default every message request is answered by
// [EchoReply] ("memory echo"), which is not JSON: script the replies to a
// request with output_config. Options script replies (text, thinking,
// tool_use, errors, a cut stream, an error event) and slow streams down.
// [NewServer] starts the fake on an httptest.Server for one test; its
// [Recorder] keeps what the fake received. [Handler] is the same fake for
// any http.Server.
package anthropictest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deskhand/deskhand/models/modeltest"
)

// DefaultModel is the model requests name unless [WithModels] says
// otherwise; it is one of [DefaultModels].
const DefaultModel = "claude-sonnet-4-5-20250929"

// APIVersion is the anthropic-version the SDK v2.15.0 sends.
const APIVersion = "2026-10-21"

// ModelInfo is a model the fake serves.
type ModelInfo struct {
	ID          string
	DisplayName string
	CreatedAt   time.Time // the epoch when zero, as the API says "unknown"
	// MaxInputTokens is the context window (max_input_tokens): a request
	// with more words is refused as too long. 0 means 200000.
	MaxInputTokens int
	// MaxTokens is the largest max_tokens accepted. 0 means 64000.
	MaxTokens int
	// NoStructuredOutputs reports capabilities.structured_outputs
	// unsupported and refuses output_config.format.
	NoStructuredOutputs bool
}

// DefaultModels are the models served unless [WithModels] says otherwise,
// most recently released first, as the API lists them.
func DefaultModels() []ModelInfo {
	return []ModelInfo{
		{ID: "claude-opus-4-5-20251101", DisplayName: "Claude Opus 4.5", CreatedAt: time.Date(2025, 11, 24, 0, 0, 0, 0, time.UTC)},
		{ID: "claude-haiku-4-5-20251001", DisplayName: "Claude Haiku 4.5", CreatedAt: time.Date(2025, 10, 15, 0, 0, 0, 0, time.UTC)},
		{ID: DefaultModel, DisplayName: "Claude Sonnet 4.5", CreatedAt: time.Date(2025, 9, 29, 0, 0, 0, 0, time.UTC)},
	}
}

// Reply is how the fake answers one POST /v1/messages request.
type Reply struct {
	// Thinking is sent first, as a thinking block with a signature.
	Thinking string
	// Text is one text block, streamed a word at a time.
	Text string
	// ToolUses are tool_use blocks after the text.
	ToolUses []ToolUse
	// StopReason defaults to "tool_use" when there are tool uses and to
	// "end_turn" otherwise.
	StopReason string
	// Model is the reply's model; the requested one when empty.
	Model string
	// InputTokens and OutputTokens are the usage reported; zero means
	// counted: words of the request, and delta events sent.
	InputTokens, OutputTokens int
	// CacheCreationInputTokens and CacheReadInputTokens are reported as
	// they are.
	CacheCreationInputTokens, CacheReadInputTokens int
	// Error, when set, is the answer instead of a message (before any
	// event of a stream).
	Error *APIError
	// StreamError is sent as an "event: error" after the first delta of a
	// stream (with status 200 and no message_stop), as the API does when
	// it fails mid-answer; a request without "stream" gets it as Error.
	StreamError *APIError
	// Cut closes the connection after the first delta of a stream,
	// without message_stop (a request without "stream": before any byte).
	Cut bool
}

// ToolUse is a tool_use block of a [Reply].
type ToolUse struct {
	ID    string // "toolu_" and 24 letters and digits when empty
	Name  string
	Input string // a JSON object; "" is {}
}

// APIError is an error answer in Anthropic's shape.
type APIError struct {
	Status  int    // HTTP status
	Type    string // error.type, e.g. "rate_limit_error"
	Message string // error.message
	// RetryAfter, when positive, is sent as the retry-after header, in
	// whole seconds.
	RetryAfter int
}

// Error replies for [WithReplies], with the API's statuses and types.
var (
	// Overloaded is 529 overloaded_error, as the API answers when busy.
	Overloaded = Reply{Error: &APIError{Status: 529, Type: "overloaded_error", Message: "Overloaded"}}
	// ServerError is 500 api_error.
	ServerError = Reply{Error: &APIError{Status: 500, Type: "api_error", Message: "Internal server error"}}
)

// RateLimited is 429 rate_limit_error with "retry-after: seconds" (none
// when seconds <= 0).
func RateLimited(seconds int) Reply {
	return Reply{Error: &APIError{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
		Message: "This request would exceed your organization's rate limit of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.", RetryAfter: seconds}}
}

// PromptTooLong is the 400 invalid_request_error the API answers for a
// request that does not fit the context window.
func PromptTooLong(tokens, maximum int) Reply {
	return Reply{Error: &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error",
		Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, maximum)}}
}

// Option configures the fake.
type Option func(*config)

type config struct {
	modeltest.Base[Request]
	models    []ModelInfo
	replies   []Reply
	replyFunc func(Request) Reply
	apiKey    string
	cut       bool
}

// WithModels sets the models served, in the order GET /v1/models lists
// them (default [DefaultModels]).
func WithModels(models ...ModelInfo) Option {
	return func(c *config) { c.models = slices.Clone(models) }
}

// WithReplies scripts the answers to successive POST /v1/messages
// requests that pass the fake's checks (key, version, model, format).
// Once they are used up, the [WithReplyFunc] hook or [EchoReply] answers.
func WithReplies(replies ...Reply) Option {
	return func(c *config) { c.replies = append(c.replies, replies...) }
}

// WithReplyFunc answers requests the script does not cover. f may call
// [EchoReply] for the default answer; it may be called concurrently.
func WithReplyFunc(f func(Request) Reply) Option {
	return func(c *config) { c.replyFunc = f }
}

// WithAPIKey makes the fake accept only key (as x-api-key or
// "Authorization: Bearer <key>"): other keys get 401
// authentication_error "invalid x-api-key".
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey = key }
}

// WithEventDelay waits d before each event of a stream, ending early when
// the client goes away (which the [Recorder] counts as aborted).
func WithEventDelay(d time.Duration) Option {
	return func(c *config) { c.Delay = d }
}

// WithCutStream makes every streamed reply close the connection after its
// first delta, without message_stop.
func WithCutStream() Option {
	return func(c *config) { c.cut = true }
}

// WithRecorder records what the fake receives into r (as [NewServer] does).
func WithRecorder(r *Recorder) Option {
	return func(c *config) { c.Recorders = append(c.Recorders, &r.Recorder) }
}

// Server is a fake Anthropic API on an httptest.Server, closed when the
// test ends.
type Server struct {
	*httptest.Server
	*Recorder
}

// NewServer starts the fake for the test t.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	rec := &Recorder{}
	return &Server{Server: modeltest.Serve(t, Handler(append(slices.Clone(opts), WithRecorder(rec))...)), Recorder: rec}
}

// Handler returns the fake as an http.Handler.
func Handler(opts ...Option) http.Handler {
	c := config{models: DefaultModels()}
	for _, opt := range opts {
		opt(&c)
	}
	f := &fake{cfg: c, replies: &modeltest.Replies[Request, Reply]{Scripted: c.replies, Func: c.replyFunc, Echo: EchoReply}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", f.messages)
	mux.HandleFunc("GET /v1/models", f.listModels)
	mux.HandleFunc("GET /v1/models/{id}", f.getModel)
	f.mux = mux
	return f
}

type fake struct {
	cfg config
	mux *http.ServeMux

	replies *modeltest.Replies[Request, Reply]
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := f.cfg.Receive(r)
	if err != nil {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: err.Error()})
		return
	}
	if _, pattern := f.mux.Handler(r); pattern == "" {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "Not Found"})
		return
	}
	if e := f.authorize(r); e != nil {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/messages" {
			f.record(body) // refused requests are recorded too
		}
		writeError(w, e)
		return
	}
	f.mux.ServeHTTP(w, r)
}

// authorize checks the key and the API version.
func (f *fake) authorize(r *http.Request) *APIError {
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	switch {
	case key == "":
		return &APIError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "x-api-key header is required"}
	case f.cfg.apiKey != "" && key != f.cfg.apiKey:
		return &APIError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}
	case r.Header.Get("Anthropic-Version") == "":
		return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "anthropic-version: header is required"}
	}
	return nil
}

// record decodes a messages body for the recorders; ok is false if it is
// not a JSON request.
func (f *fake) record(body []byte) (Request, bool) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return req, false
	}
	f.cfg.Record(req)
	return req, true
}

func (f *fake) model(id string) (ModelInfo, bool) {
	for _, m := range f.cfg.models {
		if m.ID == id {
			return withDefaults(m), true
		}
	}
	return ModelInfo{}, false
}

func withDefaults(m ModelInfo) ModelInfo {
	if m.MaxInputTokens == 0 {
		m.MaxInputTokens = 200000
	}
	if m.MaxTokens == 0 {
		m.MaxTokens = 64000
	}
	if m.DisplayName == "" {
		m.DisplayName = m.ID
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Unix(0, 0) // the API's "unknown"
	}
	return m
}

func (f *fake) messages(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, ok := f.record(body)
	if !ok {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "There was an error parsing the body of your request: it is not valid JSON"})
		return
	}
	if msg := req.validate(); msg != "" {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg})
		return
	}
	m, ok := f.model(req.Model)
	if !ok {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "model: " + req.Model})
		return
	}
	if *req.MaxTokens > m.MaxTokens {
		writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: fmt.Sprintf("max_tokens: %d > %d, which is the maximum allowed number of output tokens for %s", *req.MaxTokens, m.MaxTokens, m.ID)})
		return
	}
	if oc := req.OutputConfig; oc != nil && oc.Format != nil {
		msg := validateSchema(oc.Format.Schema)
		switch {
		case oc.Format.Type != "json_schema":
			msg = "output_config.format.type: Input should be 'json_schema'"
		case m.NoStructuredOutputs:
			msg = "output_config.format: structured outputs are not supported by " + m.ID
		}
		if msg != "" {
			writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg})
			return
		}
	}
	if n := countWords(req); n > m.MaxInputTokens {
		writeError(w, PromptTooLong(n, m.MaxInputTokens).Error)
		return
	}
	reply := f.reply(req)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	if !req.Stream {
		f.whole(w, req, reply)
		return
	}
	s := f.cfg.Stream(w, r, http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "Cache-Control": {"no-cache"}, "Request-Id": {newID("req_")}})
	f.cfg.Done(s.Play(frames(req, reply)))
}

// reply picks the answer: the script, then the hook, then the echo; the
// stream-wide options apply on top.
func (f *fake) reply(req Request) Reply {
	reply := f.replies.Next(req)
	reply.Cut = reply.Cut || f.cfg.cut
	if reply.StopReason == "" {
		reply.StopReason = "end_turn"
		if len(reply.ToolUses) > 0 {
			reply.StopReason = "tool_use"
		}
	}
	if reply.Model == "" {
		reply.Model = req.Model
	}
	reply.ToolUses = slices.Clone(reply.ToolUses)
	for i := range reply.ToolUses {
		if reply.ToolUses[i].ID == "" {
			reply.ToolUses[i].ID = newID("toolu_")
		}
		if strings.TrimSpace(reply.ToolUses[i].Input) == "" {
			reply.ToolUses[i].Input = "{}"
		}
	}
	return reply
}

// block is a content block with the deltas that fill it.
type block struct {
	start  any
	deltas []any
	whole  any // the block in a whole message
}

// blocks are the reply's content blocks: thinking, text, tool uses.
func blocks(reply Reply) []block {
	var out []block
	if reply.Thinking != "" {
		sig := newID("sig_")
		b := block{
			start: thinkingBlock{Type: "thinking"},
			whole: thinkingBlock{Type: "thinking", Thinking: reply.Thinking, Signature: sig},
		}
		for _, w := range strings.SplitAfter(reply.Thinking, " ") {
			b.deltas = append(b.deltas, thinkingDelta{Type: "thinking_delta", Thinking: w})
		}
		b.deltas = append(b.deltas, signatureDelta{Type: "signature_delta", Signature: sig})
		out = append(out, b)
	}
	if reply.Text != "" {
		b := block{
			start: textBlock{Type: "text"},
			whole: textBlock{Type: "text", Text: reply.Text},
		}
		for _, w := range strings.SplitAfter(reply.Text, " ") {
			b.deltas = append(b.deltas, textDelta{Type: "text_delta", Text: w})
		}
		out = append(out, b)
	}
	for _, tu := range reply.ToolUses {
		whole := json.RawMessage(tu.Input)
		if !json.Valid(whole) { // a scripted cut-off input: streamed as it is, whole as {}
			whole = json.RawMessage(`{}`)
		}
		b := block{
			start: toolUseBlock{Type: "tool_use", ID: tu.ID, Name: tu.Name, Input: json.RawMessage(`{}`)},
			whole: toolUseBlock{Type: "tool_use", ID: tu.ID, Name: tu.Name, Input: whole},
		}
		// The API sends an empty piece first, then the input in pieces
		// that split keys and values anywhere.
		b.deltas = append(b.deltas, inputJSONDelta{Type: "input_json_delta"})
		for _, piece := range split(tu.Input, 7) {
			b.deltas = append(b.deltas, inputJSONDelta{Type: "input_json_delta", PartialJSON: piece})
		}
		out = append(out, b)
	}
	return out
}

// split cuts s into pieces of at most n bytes, never inside a character.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// usageOf is the usage a reply reports; output is the delta events sent.
func usageOf(req Request, reply Reply, output int) usage {
	u := usage{
		InputTokens:              reply.InputTokens,
		CacheCreationInputTokens: reply.CacheCreationInputTokens,
		CacheReadInputTokens:     reply.CacheReadInputTokens,
		OutputTokens:             reply.OutputTokens,
	}
	if u.InputTokens == 0 {
		u.InputTokens = countWords(req)
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = output
	}
	return u
}

// countWords is the fake's token count of a request: its words.
func countWords(req Request) int {
	n := 0
	var count func(bs Blocks)
	count = func(bs Blocks) {
		for _, b := range bs {
			n += len(strings.Fields(b.Text)) + len(strings.Fields(b.Thinking)) + len(strings.Fields(string(b.Input)))
			count(b.Content)
		}
	}
	count(req.System)
	for _, m := range req.Messages {
		count(m.Content)
	}
	return n
}

// frames are the reply as server-sent events, as the API sends them:
// message_start; for each block content_block_start (a ping after the
// first), its deltas and content_block_stop; message_delta and
// message_stop. A failure after the first delta is an "event: error",
// and nothing follows.
func frames(req Request, reply Reply) modeltest.Frames {
	event := func(typ string, data any) modeltest.Frame {
		return modeltest.Frame{Data: modeltest.SSE(typ, modeltest.JSON(data))}
	}
	start := message{
		Model: reply.Model, ID: newID("msg_"), Type: "message", Role: "assistant", Content: []any{},
		Usage: usageOf(req, reply, 1),
	}
	start.Usage.OutputTokens = 1
	start.Usage.CacheCreation = &cacheCreation{}
	start.Usage.ServiceTier, start.Usage.InferenceGeo = "standard", "global"
	f := modeltest.Frames{Cut: reply.Cut, Body: []modeltest.Frame{event("message_start", messageStart{Type: "message_start", Message: start})}}
	sent := 0
	for i, b := range blocks(reply) {
		f.Body = append(f.Body, event("content_block_start", blockStart{Type: "content_block_start", Index: i, ContentBlock: b.start}))
		if i == 0 {
			f.Body = append(f.Body, event("ping", typeOnly{Type: "ping"}))
		}
		for _, d := range b.deltas {
			fr := event("content_block_delta", blockDelta{Type: "content_block_delta", Index: i, Delta: d})
			fr.Piece = true
			f.Body = append(f.Body, fr)
			sent++
		}
		f.Body = append(f.Body, event("content_block_stop", blockStop{Type: "content_block_stop", Index: i}))
	}
	if e := reply.StreamError; e != nil {
		f.Fail = []modeltest.Frame{event("error", errorBody{Type: "error", Error: errorDetail{Type: e.Type, Message: e.Message}})}
	}
	md := messageDelta{Type: "message_delta", Usage: usageOf(req, reply, sent)}
	md.Delta.StopReason = reply.StopReason
	f.Tail = []modeltest.Frame{event("message_delta", md), event("message_stop", typeOnly{Type: "message_stop"})}
	return f
}

// whole answers a request without "stream" with one message.
func (f *fake) whole(w http.ResponseWriter, req Request, reply Reply) {
	switch {
	case reply.Cut:
		panic(http.ErrAbortHandler)
	case reply.StreamError != nil:
		e := *reply.StreamError
		if e.Status == 0 {
			e.Status = http.StatusInternalServerError
		}
		writeError(w, &e)
		return
	}
	bs := blocks(reply)
	content := make([]any, 0, len(bs))
	deltas := 0
	for _, b := range bs {
		content = append(content, b.whole)
		deltas += len(b.deltas)
	}
	stop := reply.StopReason
	msg := message{
		Model: reply.Model, ID: newID("msg_"), Type: "message", Role: "assistant", Content: content,
		StopReason: &stop, Usage: usageOf(req, reply, deltas),
	}
	msg.Usage.CacheCreation = &cacheCreation{}
	msg.Usage.ServiceTier, msg.Usage.InferenceGeo = "standard", "global"
	w.Header().Set("Request-Id", newID("req_"))
	writeJSON(w, http.StatusOK, msg)
}

func (f *fake) listModels(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "limit: Input should be greater than or equal to 1 and less than or equal to 1000"})
			return
		}
		limit = n
	}
	// A page is the limit models after after_id, or before before_id.
	models := f.cfg.models
	index := func(id string) int { return slices.IndexFunc(models, func(m ModelInfo) bool { return m.ID == id }) }
	lo, hi := 0, min(limit, len(models))
	if after := q.Get("after_id"); after != "" {
		lo = index(after) + 1
		hi = min(lo+limit, len(models))
	} else if before := q.Get("before_id"); before != "" {
		if hi = index(before); hi < 0 {
			hi = 0
		}
		lo = max(0, hi-limit)
	}
	p := page{Data: []modelJSON{}}
	for _, m := range models[lo:hi] {
		p.Data = append(p.Data, toJSON(withDefaults(m)))
	}
	if n := len(p.Data); n > 0 {
		p.FirstID, p.LastID = &p.Data[0].ID, &p.Data[n-1].ID
	}
	p.HasMore = hi < len(models)
	if q.Get("before_id") != "" {
		p.HasMore = lo > 0
	}
	w.Header().Set("Request-Id", newID("req_"))
	writeJSON(w, http.StatusOK, p)
}

func (f *fake) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, ok := f.model(id)
	if !ok {
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "not_found_error", Message: "model: " + id})
		return
	}
	w.Header().Set("Request-Id", newID("req_"))
	writeJSON(w, http.StatusOK, toJSON(m))
}

// toJSON describes a model as the API does.
func toJSON(m ModelInfo) modelJSON {
	out := modelJSON{
		ID: m.ID, Type: "model", DisplayName: m.DisplayName, CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339),
		Lifecycle: "active", MaxInputTokens: m.MaxInputTokens, MaxTokens: m.MaxTokens,
	}
	for _, line := range []string{"opus", "sonnet", "haiku"} {
		if strings.Contains(m.ID, line) {
			out.Line = &line
		}
	}
	yes := support{Supported: true}
	c := &out.Capabilities
	c.Batch, c.Citations, c.CodeExecution, c.ImageInput, c.PDFInput = yes, yes, yes, yes, yes
	c.StructuredOutputs = support{Supported: !m.NoStructuredOutputs}
	c.ContextManagement.Supported = true
	c.ContextManagement.ClearToolUses20250919, c.ContextManagement.ClearThinking20251015 = yes, yes
	c.ServerTools.Supported, c.ServerTools.CodeExecution, c.ServerTools.WebSearch = true, yes, yes
	c.Thinking.Supported = true
	c.Thinking.Types.Enabled, c.Thinking.Types.Disabled = yes, yes
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	modeltest.WriteJSON(w, status, "application/json", v)
}

// writeError answers e in Anthropic's error shape.
func writeError(w http.ResponseWriter, e *APIError) {
	id := newID("req_")
	w.Header().Set("Request-Id", id)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	status := e.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, errorBody{Type: "error", Error: errorDetail{Type: e.Type, Message: e.Message}, RequestID: id})
}

// newID is prefix and 24 letters and digits, the shape of the API's IDs
// ("msg_01VLZuPg94y7NULJySZhEDJY").
func newID(prefix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 24)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}

// AskPrefix starts a user message that makes [EchoReply] ask the person.
const AskPrefix = modeltest.AskPrefix

// EchoReply is the default answer, [modeltest.Echo] ("memory echo"): "I
// remember: " and the text of every user message of req joined with " | ".
// After tool results it answers "You answered: " and the results' text;
// for a last user message starting with [AskPrefix] it calls ask_user
// with the rest as the question.
func EchoReply(req Request) Reply {
	turns := make([]modeltest.Turn, len(req.Messages))
	for i, m := range req.Messages {
		turns[i] = modeltest.Turn{User: m.Role == "user", Text: m.Content.Text()}
		for _, b := range m.Content {
			if b.Type == "tool_result" && m.Role == "user" {
				turns[i].Results = append(turns[i].Results, b.Content.Text())
			}
		}
	}
	text, ask := modeltest.Echo(turns)
	if ask != nil {
		return Reply{ToolUses: []ToolUse{{ID: "toolu_" + ask.ID, Name: ask.Name, Input: ask.Arguments}}}
	}
	return Reply{Text: text}
}
