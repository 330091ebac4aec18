// Package ollamatest is a fake Ollama server for tests. It speaks Ollama's
// wire format (as of v0.17.4): /api/chat streamed as application/x-ndjson
// chunks of api.ChatResponse ending in a done chunk with metrics, or one
// JSON object when "stream" is false; /api/tags, /api/version; /api/show
// with each model's capabilities and model_info (its context length among
// them: [WithCapabilities], [WithContextLength]); HEAD and GET / ("Ollama
// is running"); 404 {"error":"model 'x' not found"} for a model that is
// not installed, and 400 "… does not support tools" for tools sent to a
// model without the tools capability. The [Recorder] keeps each chat's
// num_ctx ([Recorder.NumCtx]).
//
// By default every chat is answered by [EchoReply] ("memory echo"): the
// reply is "I remember: " followed by all user messages of the request
// joined with " | ", streamed a word at a time, so a test can see whether a
// conversation's history reached the model. It also follows a small
// script: a user message "ask: QUESTION" makes it call the ask_user tool
// with QUESTION, and a tool result is answered "You answered: RESULT".
// GET /_fake/stats reports how many chats it served, so a test can prove a
// turn was not replayed. Options script replies (tool
// calls included), fail or cut streams and slow them down.
//
// [NewServer] starts the fake on an httptest.Server for one test; its
// [Recorder] keeps what the fake received. [Handler] is the same fake for
// any http.Server; testdata/fakeollama serves it as a command:
//
//	go run ./models/ollama/ollamatest/testdata/fakeollama -addr 127.0.0.1:11555
package ollamatest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/deskhand/deskhand/models/modeltest"
)

// DefaultModel is the model installed unless [WithModels] says otherwise.
const DefaultModel = "llama3.2:latest"

// DefaultContextLength is the context length /api/show reports unless
// [WithContextLength] says otherwise (llama3.2's).
const DefaultContextLength = 131072

// DefaultCapabilities are what /api/show lists for a model unless
// [WithCapabilities] says otherwise.
var DefaultCapabilities = []model.Capability{model.CapabilityCompletion, model.CapabilityTools}

// DefaultVersion is what /api/version reports unless [WithVersion] says
// otherwise.
const DefaultVersion = "0.17.4"

// Reply is how the fake answers one /api/chat request.
type Reply struct {
	Content   string         // streamed a word at a time
	Thinking  string         // sent first, as one chunk
	ToolCalls []api.ToolCall // sent whole in one chunk with empty content, as Ollama does
	// DoneReason defaults to "stop" (Ollama reports "stop" after tool calls too).
	DoneReason string
	// PromptTokens and OutputTokens are the done chunk's prompt_eval_count
	// and eval_count. Zero means counted: words of the request's messages,
	// and chunks sent.
	PromptTokens, OutputTokens int
	// Status, when set, answers with this HTTP status and {"error": Error}
	// instead of a stream (as Ollama does before streaming starts).
	Status int
	// Error, when Status is 0, is sent as an {"error": …} line after the
	// first chunk; the status stays 200 and no done chunk follows.
	Error string
	// Cut closes the connection after the first chunk, with no done chunk.
	Cut bool
}

// Option configures the fake.
type Option func(*config)

type config struct {
	modeltest.Base[api.ChatRequest]
	models    []string
	caps      map[string][]model.Capability // by canonical name
	ctxLens   map[string]int                // by canonical name
	version   string
	replies   []Reply
	replyFunc func(api.ChatRequest) Reply
	midError  string
	cut       bool
	apiKey    string
}

// WithModels sets the installed models, in the order /api/tags lists them
// (default [DefaultModel]). Chat and show accept a name without a tag as
// ":latest", as Ollama does.
func WithModels(names ...string) Option {
	return func(c *config) { c.models = slices.Clone(names) }
}

// WithCapabilities sets what /api/show lists as the model's capabilities
// (default [DefaultCapabilities]); with none, show leaves "capabilities"
// out, as an Ollama too old to list them does.
func WithCapabilities(name string, caps ...model.Capability) Option {
	return func(c *config) {
		if c.caps == nil {
			c.caps = make(map[string][]model.Capability)
		}
		c.caps[canonical(name)] = slices.Clone(caps)
	}
}

// WithContextLength sets the model's "<arch>.context_length" in
// /api/show's model_info (default [DefaultContextLength]); 0 leaves it out.
func WithContextLength(name string, n int) Option {
	return func(c *config) {
		if c.ctxLens == nil {
			c.ctxLens = make(map[string]int)
		}
		c.ctxLens[canonical(name)] = n
	}
}

// WithVersion sets what /api/version reports.
func WithVersion(v string) Option {
	return func(c *config) { c.version = v }
}

// WithReplies scripts the answers to successive /api/chat requests (to an
// installed model). Once they are used up, the [WithReplyFunc] hook or
// [EchoReply] answers.
func WithReplies(replies ...Reply) Option {
	return func(c *config) { c.replies = append(c.replies, replies...) }
}

// WithReplyFunc answers chats the script does not cover. f may call
// [EchoReply] for the default answer; it may be called concurrently.
func WithReplyFunc(f func(api.ChatRequest) Reply) Option {
	return func(c *config) { c.replyFunc = f }
}

// WithMidStreamError makes every streamed reply send {"error": msg} after
// its first chunk, with status 200, as Ollama does when the model fails.
func WithMidStreamError(msg string) Option {
	return func(c *config) { c.midError = msg }
}

// WithCutStream makes every streamed reply close the connection after its
// first chunk, without a done chunk.
func WithCutStream() Option {
	return func(c *config) { c.cut = true }
}

// WithChunkDelay waits d before each chunk of a streamed reply, ending early
// when the client goes away (which the [Recorder] counts as aborted).
func WithChunkDelay(d time.Duration) Option {
	return func(c *config) { c.Delay = d }
}

// WithAPIKey makes the fake answer 401 {"error":"unauthorized"} to any
// request but "/" that lacks "Authorization: Bearer <key>".
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey = key }
}

// WithRecorder records what the fake receives into r (as [NewServer] does).
func WithRecorder(r *Recorder) Option {
	return func(c *config) { c.Recorders = append(c.Recorders, &r.Recorder) }
}

// Server is a fake Ollama on an httptest.Server, closed when the test ends.
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

// Handler returns the fake Ollama as an http.Handler.
func Handler(opts ...Option) http.Handler {
	c := config{models: []string{DefaultModel}, version: DefaultVersion}
	for _, opt := range opts {
		opt(&c)
	}
	f := &fake{cfg: c, replies: &modeltest.Replies[api.ChatRequest, Reply]{Scripted: c.replies, Func: c.replyFunc, Echo: EchoReply}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", f.root) // GET also serves HEAD
	mux.HandleFunc("GET /api/version", f.version)
	mux.HandleFunc("GET /api/tags", f.tags)
	mux.HandleFunc("POST /api/show", f.show)
	mux.HandleFunc("POST /api/chat", f.chat)
	mux.HandleFunc("GET /_fake/stats", f.stats)
	mux.HandleFunc("POST /api/pull", f.pull)
	f.mux = mux
	return f
}

// pull streams Ollama's pull progress; a model whose name starts with
// "missing" fails as an unknown model does.
func (f *fake) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s := modeltest.NewStream(w, r, http.Header{"Content-Type": {ndjson}}, 0)
	s.Send(modeltest.NDJSON(api.ProgressResponse{Status: "pulling manifest"}))
	if strings.HasPrefix(req.Model, "missing") {
		s.Send(modeltest.NDJSON(map[string]string{"error": "pull model manifest: file does not exist"}))
		return
	}
	const total = 1000
	for done := int64(0); done <= total; done += 500 {
		if !modeltest.Pause(r.Context(), f.cfg.Delay) ||
			!s.Send(modeltest.NDJSON(api.ProgressResponse{Status: "pulling 500a1f067a9f", Digest: "sha256:500a1f067a9f", Total: total, Completed: done})) {
			return
		}
	}
	for _, status := range []string{"verifying sha256 digest", "writing manifest", "success"} {
		s.Send(modeltest.NDJSON(api.ProgressResponse{Status: status}))
	}
}

// ndjson is the content type of Ollama's streams.
const ndjson = "application/x-ndjson"

// stats reports how many chats were served.
func (f *fake) stats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]int64{"chats": f.chats.Load()})
}

type fake struct {
	chats atomic.Int64 // /api/chat requests served
	cfg   config
	mux   *http.ServeMux

	replies *modeltest.Replies[api.ChatRequest, Reply]
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := f.cfg.Receive(r); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if f.cfg.apiKey != "" && r.URL.Path != "/" && r.Header.Get("Authorization") != "Bearer "+f.cfg.apiKey {
		writeError(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	// Ollama's router (gin) answers unknown routes and methods alike with
	// a plain-text 404.
	if _, pattern := f.mux.Handler(r); pattern == "" {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	f.mux.ServeHTTP(w, r)
}

func (f *fake) root(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "Ollama is running")
}

func (f *fake) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": f.cfg.version})
}

// modifiedAt is when the fake's models were "pulled".
var modifiedAt = time.Date(2025, 11, 1, 12, 0, 0, 123456789, time.UTC)

func (f *fake) tags(w http.ResponseWriter, r *http.Request) {
	resp := api.ListResponse{Models: []api.ListModelResponse{}}
	for _, name := range f.cfg.models {
		resp.Models = append(resp.Models, api.ListModelResponse{
			Name:       name,
			Model:      name,
			ModifiedAt: modifiedAt,
			Size:       2019393189,
			Digest:     digest(name),
			Details:    details(name),
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *fake) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := req.Model
	if name == "" {
		//lint:ignore SA1019 the real Ollama still takes "name" from older clients, so the fake does too
		name = req.Name
	}
	if !f.installed(name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	writeJSON(w, http.StatusOK, f.showResponse(name))
}

// showResponse is /api/show's answer, shaped as Ollama v0.17.4 gives it:
// the type is api.ShowResponse (api/types.go), which Ollama's ShowHandler
// (server/routes.go) marshals; the model_info keys are those of the
// example in Ollama's docs/api.md ("Show Model Information"), for a model
// of the architecture its family names, with the tokenizer's arrays left
// empty as they are without "verbose".
func (f *fake) showResponse(name string) api.ShowResponse {
	d := details(name)
	arch := d.Family
	caps, ok := f.cfg.caps[canonical(name)]
	if !ok {
		caps = DefaultCapabilities
	}
	ctxLen, ok := f.cfg.ctxLens[canonical(name)]
	if !ok {
		ctxLen = DefaultContextLength
	}
	info := map[string]any{
		"general.architecture":            arch,
		"general.file_type":               2,
		"general.parameter_count":         3212749888,
		"general.quantization_version":    2,
		arch + ".attention.head_count":    24,
		arch + ".attention.head_count_kv": 8,
		arch + ".block_count":             28,
		arch + ".embedding_length":        3072,
		arch + ".feed_forward_length":     8192,
		arch + ".rope.dimension_count":    128,
		arch + ".rope.freq_base":          500000,
		arch + ".vocab_size":              128256,
		"tokenizer.ggml.bos_token_id":     128000,
		"tokenizer.ggml.eos_token_id":     128009,
		"tokenizer.ggml.merges":           []string{},
		"tokenizer.ggml.model":            "gpt2",
		"tokenizer.ggml.pre":              "llama-bpe",
		"tokenizer.ggml.token_type":       []int{},
		"tokenizer.ggml.tokens":           []string{},
	}
	if ctxLen != 0 {
		info[arch+".context_length"] = ctxLen
	}
	return api.ShowResponse{
		License:      "LLAMA 3.2 COMMUNITY LICENSE AGREEMENT",
		Modelfile:    "# Modelfile generated by \"ollama show\"\nFROM " + name + "\n",
		Parameters:   "stop                           \"<|start_header_id|>\"\nstop                           \"<|end_header_id|>\"\nstop                           \"<|eot_id|>\"",
		Template:     "{{ .Prompt }}",
		Details:      d,
		ModelInfo:    info,
		Capabilities: slices.Clone(caps),
		ModifiedAt:   modifiedAt,
	}
}

func (f *fake) chat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.chats.Add(1)
	f.cfg.Record(req)
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "model is required")
		return
	}
	if !f.installed(req.Model) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	if caps, ok := f.cfg.caps[canonical(req.Model)]; ok && len(caps) > 0 && len(req.Tools) > 0 && !slices.Contains(caps, model.CapabilityTools) {
		// Ollama's CheckCapabilities, wrapped with the model's full name.
		writeError(w, http.StatusBadRequest, "registry.ollama.ai/library/"+canonical(req.Model)+" does not support tools")
		return
	}
	reply := f.reply(req)
	if reply.Status != 0 {
		writeError(w, reply.Status, reply.Error)
		return
	}
	if req.Stream != nil && !*req.Stream {
		f.whole(w, req, reply)
		return
	}
	f.cfg.Done(f.cfg.Stream(w, r, http.Header{"Content-Type": {ndjson}}).Play(frames(req, reply)))
}

// reply picks the answer: the script, then the hook, then the echo; the
// stream-wide options apply on top.
func (f *fake) reply(req api.ChatRequest) Reply {
	reply := f.replies.Next(req)
	if f.cfg.midError != "" && reply.Error == "" {
		reply.Error = f.cfg.midError
	}
	reply.Cut = reply.Cut || f.cfg.cut
	if reply.DoneReason == "" {
		reply.DoneReason = "stop"
	}
	return reply
}

// chunks are the non-final chunks of a streamed reply.
func chunks(req api.ChatRequest, reply Reply) []api.ChatResponse {
	var out []api.ChatResponse
	msg := func(m api.Message) api.ChatResponse {
		m.Role = "assistant"
		return api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: m}
	}
	if reply.Thinking != "" {
		out = append(out, msg(api.Message{Thinking: reply.Thinking}))
	}
	if reply.Content != "" {
		for _, word := range strings.SplitAfter(reply.Content, " ") {
			out = append(out, msg(api.Message{Content: word}))
		}
	}
	if len(reply.ToolCalls) > 0 {
		calls := slices.Clone(reply.ToolCalls)
		for i := range calls {
			calls[i].Function.Index = i
		}
		out = append(out, msg(api.Message{ToolCalls: calls}))
	}
	return out
}

// done is the final chunk, with metrics.
func done(req api.ChatRequest, reply Reply, sent int) api.ChatResponse {
	prompt, output := reply.PromptTokens, reply.OutputTokens
	if prompt == 0 {
		for _, m := range req.Messages {
			prompt += len(strings.Fields(m.Content))
		}
	}
	if output == 0 {
		output = sent
	}
	return api.ChatResponse{
		Model:      req.Model,
		CreatedAt:  time.Now().UTC(),
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: reply.DoneReason,
		Metrics: api.Metrics{
			TotalDuration:      123456789,
			LoadDuration:       1234567,
			PromptEvalCount:    prompt,
			PromptEvalDuration: 2345678,
			EvalCount:          output,
			EvalDuration:       3456789,
		},
	}
}

// frames are the reply as NDJSON, one api.ChatResponse a line, as
// Ollama's streamResponse writes it; a failure after the first chunk is
// an {"error": …} line, and no done chunk follows.
func frames(req api.ChatRequest, reply Reply) modeltest.Frames {
	cs := chunks(req, reply)
	f := modeltest.Frames{Cut: reply.Cut, Tail: []modeltest.Frame{{Data: modeltest.NDJSON(done(req, reply, len(cs)))}}}
	for _, c := range cs {
		f.Body = append(f.Body, modeltest.Frame{Data: modeltest.NDJSON(c), Piece: true})
	}
	if reply.Error != "" {
		f.Fail = []modeltest.Frame{{Data: modeltest.NDJSON(map[string]string{"error": reply.Error})}}
	}
	return f
}

// whole answers a "stream": false request with one object.
func (f *fake) whole(w http.ResponseWriter, req api.ChatRequest, reply Reply) {
	switch {
	case reply.Cut:
		panic(http.ErrAbortHandler)
	case reply.Error != "":
		writeError(w, http.StatusInternalServerError, reply.Error)
		return
	}
	cs := chunks(req, reply)
	resp := done(req, reply, len(cs))
	resp.Message = api.Message{Role: "assistant", Content: reply.Content, Thinking: reply.Thinking}
	for _, c := range cs {
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, c.Message.ToolCalls...)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *fake) installed(name string) bool {
	want := canonical(name)
	for _, m := range f.cfg.models {
		if canonical(m) == want {
			return true
		}
	}
	return false
}

// canonical gives a name without a tag the tag "latest", as Ollama does.
func canonical(name string) string {
	if name == "" {
		return ""
	}
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		return name + ":latest"
	}
	return name
}

func digest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

func details(name string) api.ModelDetails {
	family, _, _ := strings.Cut(name, ":")
	if i := strings.LastIndex(family, "/"); i >= 0 {
		family = family[i+1:]
	}
	family = strings.TrimRight(family, "0123456789.")
	if family == "" {
		family = "llama"
	}
	return api.ModelDetails{
		Format:            "gguf",
		Family:            family,
		Families:          []string{family},
		ParameterSize:     "3.2B",
		QuantizationLevel: "Q4_K_M",
	}
}

// writeJSON answers as Ollama's router (gin) does.
func writeJSON(w http.ResponseWriter, status int, v any) {
	modeltest.WriteJSON(w, status, "application/json; charset=utf-8", v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// AskPrefix starts a user message that makes [EchoReply] ask the person.
const AskPrefix = modeltest.AskPrefix

// EchoReply is the default answer, [modeltest.Echo] ("memory echo"): "I
// remember: " and all user messages of req joined with " | ". After a tool
// result it answers "You answered: " and the result; for a last user
// message starting with [AskPrefix] it calls ask_user with the rest as the
// question.
func EchoReply(req api.ChatRequest) Reply {
	turns := make([]modeltest.Turn, len(req.Messages))
	for i, m := range req.Messages {
		turns[i] = modeltest.Turn{User: m.Role == "user", Text: m.Content}
		if m.Role == "tool" {
			turns[i].Results = []string{m.Content}
		}
	}
	text, ask := modeltest.Echo(turns)
	if ask != nil {
		return Reply{ToolCalls: []api.ToolCall{ToolCall("call_"+ask.ID, ask.Name, ask.Arguments)}}
	}
	return Reply{Content: text}
}

// ToolCall builds a call for a scripted [Reply]. args is a JSON object; it
// panics if it is not one.
func ToolCall(id, name, args string) api.ToolCall {
	a := api.NewToolCallFunctionArguments()
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		panic(fmt.Sprintf("ollamatest.ToolCall(%q): arguments: %v", name, err))
	}
	return api.ToolCall{ID: id, Function: api.ToolCallFunction{Name: name, Arguments: a}}
}
