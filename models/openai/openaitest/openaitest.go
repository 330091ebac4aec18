// Package openaitest is a fake OpenAI Chat Completions server for tests,
// standing for api.openai.com and for the OpenAI-compatible servers (LM
// Studio, llama.cpp's server, vLLM, LiteLLM, Ollama's /v1).
//
// It speaks the wire format of the API reference
// (https://platform.openai.com/docs/api-reference/chat) as the official Go
// SDK, github.com/openai/openai-go/v3 v3.98.0, reads it:
//
//   - POST /v1/chat/completions with "stream": true answers
//     text/event-stream, one "data: {chunk}" line and a blank line per
//     chat.completion.chunk, ending with "data: [DONE]". The chunks are
//     shaped as in the SDK's own fixture (mockResponseBody in
//     streamaccumulator_test.go): a first chunk with
//     delta {"role":"assistant","content":""}; content a piece per chunk;
//     each tool call opened by a chunk with its index, id, "type":"function"
//     and function name with empty arguments, its arguments then streamed in
//     pieces under the same index alone; a last chunk with an empty delta
//     and finish_reason ("stop", "tool_calls", "length"); and, when the
//     request asks stream_options.include_usage, every chunk carries
//     "usage":null and a final chunk with "choices":[] carries the usage.
//     The SDK's SSE decoder (packages/ssestream) stops at [DONE] and turns
//     an event whose data has an "error" key into a stream error, which is
//     how a failure after the stream started is sent here.
//   - The same request with "stream" false (or absent) answers one
//     chat.completion object.
//   - GET /v1/models answers {"object":"list","data":[{"id","object":
//     "model","created","owned_by"}]}.
//   - Errors are OpenAI's {"error":{"message","type","param","code"}}:
//     404 model_not_found ("The model `x` does not exist or you do not have
//     access to it."), 401 invalid_api_key, 400 context_length_exceeded
//     (body as quoted in mckaywrigley/chatbot-ui#102), 429 with Retry-After
//     and retry-after-ms (the headers the SDK's retry reads, in
//     internal/requestconfig). Servers that are compatible only in part
//     answer in their own shapes, which the options below reproduce from
//     their reports.
//
// With [WithLMStudio] it also serves LM Studio's native model listings,
// GET /api/v1/models (LM Studio 0.4: max_context_length, loaded_instances,
// capabilities.trained_for_tool_use) and GET /api/v0/models[/{id}] (0.3.6:
// max_context_length, type; newer versions a capabilities list such as
// ["tool_use"]), as documented in lmstudio-ai/docs (1_developer/2_rest).
//
// By default every chat is answered by [EchoReply] ("memory echo"): the
// reply is "I remember: " followed by all user messages of the request
// joined with " | ", streamed a word at a time. A user message "ask:
// QUESTION" makes it call the ask_user tool with QUESTION, and a tool
// result is answered "You answered: RESULT". Options script replies (tool
// calls, errors, cut or slow streams) and record what was received.
//
// [NewServer] starts the fake on an httptest.Server for one test; its
// [Recorder] keeps what the fake received. [Handler] is the same fake for
// any http.Server; testdata/fakeopenai serves it as a command:
//
//	go run ./models/openai/openaitest/testdata/fakeopenai -addr 127.0.0.1:1234
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/modeltest"
)

// DefaultModel is the model served unless [WithModels] says otherwise.
const DefaultModel = "gpt-4o-mini"

const (
	chatPath   = "/v1/chat/completions"
	modelsPath = "/v1/models"
)

// created is the fake's clock for "created" fields.
var created = time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC).Unix()

// Reply is how the fake answers one chat completion request.
type Reply struct {
	Content string // streamed a word at a time
	// Reasoning is streamed first, as delta.reasoning_content (the field
	// llama.cpp, vLLM, LM Studio and DeepSeek use for a model's thinking).
	Reasoning string
	Refusal   string     // sent as delta.refusal
	ToolCalls []ToolCall // streamed one after the other, arguments in pieces
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// PromptTokens and CompletionTokens are the usage reported. Zero means
	// counted: words of the request's messages, and chunks sent.
	PromptTokens, CompletionTokens int
	// UsageInLastChunk puts the usage into the finish_reason chunk whatever
	// the request asked, as llama.cpp's server does, instead of a chunk of
	// its own after it.
	UsageInLastChunk bool

	// Status, when set, answers with this HTTP status before any stream:
	// Error in OpenAI's shape, or Body as it is when set.
	Status int
	Error  APIError
	Body   string
	// RetryAfter, with Status, is sent as Retry-After (whole seconds,
	// rounded up) and retry-after-ms.
	RetryAfter time.Duration

	// StreamError, when its Message is set, is sent as
	// data: {"error":{…}} after the first piece of the reply (content,
	// reasoning or tool call); no finish_reason follows.
	StreamError APIError
	// Cut closes the connection after the first piece of the reply.
	Cut bool
}

// ToolCall is a call the fake's model makes. Arguments is the JSON text
// streamed as function.arguments; it need not be valid JSON.
type ToolCall struct {
	ID, Name, Arguments string
}

// APIError is the body of an OpenAI error: {"error":{…}}. Param and Code
// go out as null when empty.
type APIError struct {
	Message, Type, Param, Code string
}

// ModelNotFound is OpenAI's answer for a model that does not exist (404).
func ModelNotFound(model string) APIError {
	return APIError{
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
		Type:    "invalid_request_error",
		Code:    "model_not_found",
	}
}

// ContextLengthExceeded is OpenAI's answer for a prompt over the model's
// context window (400).
func ContextLengthExceeded(max, requested int) APIError {
	return APIError{
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", max, requested),
		Type:    "invalid_request_error",
		Param:   "messages",
		Code:    "context_length_exceeded",
	}
}

// RateLimited is OpenAI's answer when the rate limit is hit (429).
func RateLimited(model string) APIError {
	return APIError{
		Message: fmt.Sprintf("Rate limit reached for %s in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.", model),
		Type:    "requests",
		Code:    "rate_limit_exceeded",
	}
}

// Option configures the fake.
type Option func(*config)

type config struct {
	modeltest.Base[ChatRequest]
	models        []string
	anyModel      bool
	replies       []Reply
	replyFunc     func(ChatRequest) Reply
	apiKey        string
	rejectOptions bool
	rejectSchema  bool
	rejectTools   bool
	lmstudio      []LMStudioModel
}

// WithModels sets the models served, in the order /v1/models lists them
// (default [DefaultModel]). A chat for another model is answered 404
// model_not_found, as OpenAI, vLLM and LM Studio do.
func WithModels(ids ...string) Option {
	return func(c *config) { c.models = slices.Clone(ids) }
}

// WithAnyModel answers chats whatever model they name, as llama.cpp's
// server does (it serves the one model it loaded).
func WithAnyModel() Option {
	return func(c *config) { c.anyModel = true }
}

// WithReplies scripts the answers to successive chat requests (for a
// served model, with the right key). Once they are used up, the
// [WithReplyFunc] hook or [EchoReply] answers.
func WithReplies(replies ...Reply) Option {
	return func(c *config) { c.replies = append(c.replies, replies...) }
}

// WithReplyFunc answers chats the script does not cover. f may call
// [EchoReply] for the default answer; it may be called concurrently.
func WithReplyFunc(f func(ChatRequest) Reply) Option {
	return func(c *config) { c.replyFunc = f }
}

// WithChunkDelay waits d before each chunk of a streamed reply, ending early
// when the client goes away (which the [Recorder] counts as aborted).
func WithChunkDelay(d time.Duration) Option {
	return func(c *config) { c.Delay = d }
}

// WithAPIKey makes the fake answer 401 to any request without
// "Authorization: Bearer <key>", in OpenAI's words: code invalid_api_key
// for a wrong key, and the "You didn't provide an API key" message for
// none.
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey = key }
}

// WithoutStreamOptions makes the fake refuse a request that sets
// stream_options, as Mistral's API does (422 with a pydantic detail for a
// message; body from openai/openai-agents-python#442).
func WithoutStreamOptions() Option {
	return func(c *config) { c.rejectOptions = true }
}

// WithoutJSONSchema makes the fake refuse response_format json_schema as
// older llama.cpp forks do (500 {"error":{"code":500,"message":
// "response_format type must be one of \"text\" or \"json_object\", but
// got: json_schema","type":"server_error"}}, from ikawrakow/ik_llama.cpp#778).
func WithoutJSONSchema() Option {
	return func(c *config) { c.rejectSchema = true }
}

// WithoutTools makes the fake refuse a request with tools as Ollama's /v1
// does for a model without the tools capability (400 "<model> does not
// support tools").
func WithoutTools() Option {
	return func(c *config) { c.rejectTools = true }
}

// LMStudioModel is a model in LM Studio's native listings.
type LMStudioModel struct {
	ID               string
	Type             string // "llm" unless set ("vlm", "embeddings")
	MaxContextLength int
	// LoadedContextLength, when set, is the context the model is loaded
	// with (/api/v1/models loaded_instances[].config.context_length).
	LoadedContextLength int
	// ToolUse is reported as capabilities.trained_for_tool_use in
	// /api/v1/models and as "tool_use" in /api/v0's capabilities list.
	ToolUse bool
}

// WithLMStudio serves LM Studio's native /api/v1/models and /api/v0/models
// listing these models (and, unless [WithModels] is given, /v1/models and
// chats too).
func WithLMStudio(models ...LMStudioModel) Option {
	return func(c *config) {
		c.lmstudio = slices.Clone(models)
		if c.models == nil || slices.Equal(c.models, []string{DefaultModel}) {
			c.models = nil
			for _, m := range models {
				c.models = append(c.models, m.ID)
			}
		}
	}
}

// WithRecorder records what the fake receives into r (as [NewServer] does).
func WithRecorder(r *Recorder) Option {
	return func(c *config) { c.Recorders = append(c.Recorders, &r.Recorder) }
}

// Server is a fake OpenAI on an httptest.Server, closed when the test ends.
type Server struct {
	*httptest.Server
	*Recorder
}

// BaseURL is the base URL a client is given: the server's URL and "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// NewServer starts the fake for the test t.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	rec := &Recorder{}
	return &Server{Server: modeltest.Serve(t, Handler(append(slices.Clone(opts), WithRecorder(rec))...)), Recorder: rec}
}

// Handler returns the fake as an http.Handler.
func Handler(opts ...Option) http.Handler {
	c := config{models: []string{DefaultModel}}
	for _, opt := range opts {
		opt(&c)
	}
	f := &fake{cfg: c, replies: &modeltest.Replies[ChatRequest, Reply]{Scripted: c.replies, Func: c.replyFunc, Echo: EchoReply}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+chatPath, f.chat)
	mux.HandleFunc("GET "+modelsPath, f.listModels)
	mux.HandleFunc("GET "+modelsPath+"/{id...}", f.getModel)
	if c.lmstudio != nil {
		mux.HandleFunc("GET /api/v1/models", f.lmsV1)
		mux.HandleFunc("GET /api/v0/models", f.lmsV0List)
		mux.HandleFunc("GET /api/v0/models/{id...}", f.lmsV0Get)
	}
	f.mux = mux
	return f
}

type fake struct {
	cfg config
	mux *http.ServeMux

	replies *modeltest.Replies[ChatRequest, Reply]
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := f.cfg.Receive(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, APIError{Message: err.Error(), Type: "invalid_request_error"})
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == chatPath {
		var req ChatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, APIError{
				Message: "We could not parse the JSON body of your request.", Type: "invalid_request_error"})
			return
		}
		f.cfg.Record(req)
	}
	if f.cfg.apiKey != "" {
		switch got := r.Header.Get("Authorization"); {
		case got == "":
			writeError(w, http.StatusUnauthorized, APIError{
				Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
				Type:    "invalid_request_error",
			})
			return
		case got != "Bearer "+f.cfg.apiKey:
			writeError(w, http.StatusUnauthorized, APIError{
				Message: "Incorrect API key provided: " + maskKey(strings.TrimPrefix(got, "Bearer ")) + ". You can find your API key at https://platform.openai.com/account/api-keys.",
				Type:    "invalid_request_error",
				Code:    "invalid_api_key",
			})
			return
		}
	}
	if _, pattern := f.mux.Handler(r); pattern == "" {
		writeError(w, http.StatusNotFound, APIError{
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), Type: "invalid_request_error"})
		return
	}
	f.mux.ServeHTTP(w, r)
}

// maskKey shows a key as OpenAI's 401 does: its start and its last four.
func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (f *fake) listModels(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list", Data: []modelObject{}}
	for _, id := range f.cfg.models {
		list.Data = append(list.Data, modelObject{ID: id, Object: "model", Created: created, OwnedBy: "system"})
	}
	writeJSON(w, http.StatusOK, list)
}

func (f *fake) getModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !slices.Contains(f.cfg.models, id) {
		writeError(w, http.StatusNotFound, ModelNotFound(id))
		return
	}
	writeJSON(w, http.StatusOK, modelObject{ID: id, Object: "model", Created: created, OwnedBy: "system"})
}

func (f *fake) chat(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req) // checked in ServeHTTP
	switch {
	case req.Model == "":
		writeError(w, http.StatusBadRequest, APIError{Message: "you must provide a model parameter", Type: "invalid_request_error"})
		return
	case !f.cfg.anyModel && !slices.Contains(f.cfg.models, req.Model):
		writeError(w, http.StatusNotFound, ModelNotFound(req.Model))
		return
	case f.cfg.rejectOptions && req.StreamOptions != nil:
		modeltest.WriteRaw(w, http.StatusUnprocessableEntity, `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]},"type":"invalid_request_error","param":null,"code":null}`)
		return
	case f.cfg.rejectSchema && req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema":
		modeltest.WriteRaw(w, http.StatusInternalServerError, `{"error":{"code":500,"message":"response_format type must be one of \"text\" or \"json_object\", but got: json_schema","type":"server_error"}}`)
		return
	case f.cfg.rejectTools && len(req.Tools) > 0:
		writeError(w, http.StatusBadRequest, APIError{Message: req.Model + " does not support tools", Type: "api_error"})
		return
	}
	reply := f.reply(req)
	if reply.Status != 0 {
		if reply.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(reply.RetryAfter.Seconds()))))
			w.Header().Set("retry-after-ms", strconv.FormatInt(reply.RetryAfter.Milliseconds(), 10))
		}
		if reply.Body != "" {
			modeltest.WriteRaw(w, reply.Status, reply.Body)
			return
		}
		writeError(w, reply.Status, reply.Error)
		return
	}
	if !req.Stream {
		f.whole(w, req, reply)
		return
	}
	s := f.cfg.Stream(w, r, http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "Cache-Control": {"no-cache"}})
	f.cfg.Done(s.Play(frames(req, reply)))
}

// reply picks the answer: the script, then the hook, then the echo.
func (f *fake) reply(req ChatRequest) Reply {
	reply := f.replies.Next(req)
	if reply.FinishReason == "" {
		reply.FinishReason = "stop"
		if len(reply.ToolCalls) > 0 {
			reply.FinishReason = "tool_calls"
		}
	}
	return reply
}

// Wire types of a streamed reply.
type (
	chunk struct {
		ID                string        `json:"id"`
		Object            string        `json:"object"`
		Created           int64         `json:"created"`
		Model             string        `json:"model"`
		SystemFingerprint string        `json:"system_fingerprint"`
		Choices           []chunkChoice `json:"choices"`
		Usage             *usage        `json:"usage,omitempty"`
		usageNull         bool
	}
	chunkChoice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		Logprobs     any     `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	}
	delta struct {
		Role             string          `json:"role,omitempty"`
		Content          *string         `json:"content,omitempty"`
		ReasoningContent string          `json:"reasoning_content,omitempty"`
		Refusal          string          `json:"refusal,omitempty"`
		ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
	}
	toolCallDelta struct {
		Index    int    `json:"index"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// MarshalJSON writes "usage":null on every chunk when the request asked
// for usage, as OpenAI does.
func (c chunk) MarshalJSON() ([]byte, error) {
	type plain chunk
	b, err := json.Marshal(plain(c))
	if err != nil || !c.usageNull || c.Usage != nil {
		return b, err
	}
	return append(b[:len(b)-1], []byte(`,"usage":null}`)...), nil
}

// deltas are the deltas of a streamed reply, in order, after the first
// (role) chunk.
func deltas(reply Reply) []delta {
	var out []delta
	if reply.Reasoning != "" {
		for _, word := range strings.SplitAfter(reply.Reasoning, " ") {
			out = append(out, delta{ReasoningContent: word})
		}
	}
	if reply.Content != "" {
		for _, word := range strings.SplitAfter(reply.Content, " ") {
			out = append(out, delta{Content: &word})
		}
	}
	if reply.Refusal != "" {
		out = append(out, delta{Refusal: reply.Refusal})
	}
	for i, tc := range reply.ToolCalls {
		open := toolCallDelta{Index: i, ID: tc.ID, Type: "function"}
		open.Function.Name = tc.Name
		out = append(out, delta{ToolCalls: []toolCallDelta{open}})
		for _, piece := range pieces(tc.Arguments, 8) {
			d := toolCallDelta{Index: i}
			d.Function.Arguments = piece
			out = append(out, delta{ToolCalls: []toolCallDelta{d}})
		}
	}
	return out
}

// pieces cuts s into pieces of at most n bytes (never inside a UTF-8
// sequence).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func countUsage(req ChatRequest, reply Reply, sent int) *usage {
	u := &usage{PromptTokens: reply.PromptTokens, CompletionTokens: reply.CompletionTokens}
	if u.PromptTokens == 0 {
		for _, m := range req.Messages {
			u.PromptTokens += len(strings.Fields(m.Text()))
		}
	}
	if u.CompletionTokens == 0 {
		u.CompletionTokens = sent
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// frames are the reply as server-sent events, one "data: {chunk}" each:
// the role chunk, the deltas, the finish_reason chunk, the usage chunk
// when asked for, and "data: [DONE]". A failure after the first delta is
// data: {"error":{…}}, and nothing follows.
func frames(req ChatRequest, reply Reply) modeltest.Frames {
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	id := "chatcmpl-fake" + strconv.Itoa(len(req.Messages))
	frame := func(c chunk) modeltest.Frame {
		c.ID, c.Object, c.Created, c.Model, c.SystemFingerprint = id, "chat.completion.chunk", created, req.Model, "fp_fake"
		c.usageNull = includeUsage
		return modeltest.Frame{Data: modeltest.SSE("", modeltest.JSON(c))}
	}
	empty := ""
	f := modeltest.Frames{Cut: reply.Cut, Body: []modeltest.Frame{frame(chunk{Choices: []chunkChoice{{Delta: delta{Role: "assistant", Content: &empty}}}})}}
	ds := deltas(reply)
	for _, d := range ds {
		fr := frame(chunk{Choices: []chunkChoice{{Delta: d}}})
		fr.Piece = true
		f.Body = append(f.Body, fr)
	}
	if reply.StreamError.Message != "" {
		f.Fail = []modeltest.Frame{{Data: modeltest.SSE("", modeltest.JSON(errorBody(reply.StreamError)))}}
	}
	last := chunk{Choices: []chunkChoice{{Delta: delta{}, FinishReason: &reply.FinishReason}}}
	u := countUsage(req, reply, len(ds)+1)
	if reply.UsageInLastChunk {
		last.Usage = u
	}
	f.Tail = append(f.Tail, frame(last))
	if includeUsage && !reply.UsageInLastChunk {
		f.Tail = append(f.Tail, frame(chunk{Choices: []chunkChoice{}, Usage: u}))
	}
	f.Tail = append(f.Tail, modeltest.Frame{Data: modeltest.SSE("", []byte("[DONE]"))})
	return f
}

// whole answers a request without "stream": true with one
// chat.completion object.
func (f *fake) whole(w http.ResponseWriter, req ChatRequest, reply Reply) {
	switch {
	case reply.Cut:
		panic(http.ErrAbortHandler)
	case reply.StreamError.Message != "":
		writeError(w, http.StatusInternalServerError, reply.StreamError)
		return
	}
	msg := struct {
		Role      string            `json:"role"`
		Content   *string           `json:"content"`
		Refusal   *string           `json:"refusal"`
		ToolCalls []MessageToolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant"}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		msg.Content = &reply.Content
	}
	if reply.Refusal != "" {
		msg.Refusal = &reply.Refusal
	}
	for _, tc := range reply.ToolCalls {
		c := MessageToolCall{ID: tc.ID, Type: "function"}
		c.Function.Name, c.Function.Arguments = tc.Name, tc.Arguments
		msg.ToolCalls = append(msg.ToolCalls, c)
	}
	type choice struct {
		Index        int    `json:"index"`
		Message      any    `json:"message"`
		Logprobs     any    `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	}
	writeJSON(w, http.StatusOK, struct {
		ID                string   `json:"id"`
		Object            string   `json:"object"`
		Created           int64    `json:"created"`
		Model             string   `json:"model"`
		SystemFingerprint string   `json:"system_fingerprint"`
		Choices           []choice `json:"choices"`
		Usage             *usage   `json:"usage"`
	}{
		ID: "chatcmpl-fake", Object: "chat.completion", Created: created, Model: req.Model, SystemFingerprint: "fp_fake",
		Choices: []choice{{Message: msg, FinishReason: reply.FinishReason}},
		Usage:   countUsage(req, reply, len(deltas(reply))+1),
	})
}

// errorBody is OpenAI's error object, its fields in OpenAI's order.
func errorBody(e APIError) any {
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	return struct {
		Error body `json:"error"`
	}{body{Message: e.Message, Type: e.Type, Param: nullable(e.Param), Code: nullable(e.Code)}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	modeltest.WriteJSON(w, status, "application/json", v)
}

func writeError(w http.ResponseWriter, status int, e APIError) {
	writeJSON(w, status, errorBody(e))
}

// AskPrefix starts a user message that makes [EchoReply] ask the person.
const AskPrefix = modeltest.AskPrefix

// EchoReply is the default answer, [modeltest.Echo] ("memory echo"): "I
// remember: " and all user messages of req joined with " | ". After a tool
// result it answers "You answered: " and the result; for a last user
// message starting with [AskPrefix] it calls ask_user with the rest as the
// question.
func EchoReply(req ChatRequest) Reply {
	turns := make([]modeltest.Turn, len(req.Messages))
	for i, m := range req.Messages {
		turns[i] = modeltest.Turn{User: m.Role == "user", Text: m.Text()}
		if m.Role == "tool" {
			turns[i].Results = []string{m.Text()}
		}
	}
	text, ask := modeltest.Echo(turns)
	if ask != nil {
		return Reply{ToolCalls: []ToolCall{{ID: "call_" + ask.ID, Name: ask.Name, Arguments: ask.Arguments}}}
	}
	return Reply{Content: text}
}
