package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

func TestChatErrors(t *testing.T) {
	hi := []agent.Message{{Role: agent.RoleUser, Content: "hi"}}
	quota := openaitest.APIError{
		Message: "You exceeded your current quota, please check your plan and billing details.", Type: "insufficient_quota", Code: "insufficient_quota"}
	schema := []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)
	tests := []struct {
		name     string
		fake     []openaitest.Option
		client   []openai.Option
		model    string
		tools    bool
		schema   bool
		want     string // {base} is the base URL
		wantIs   error
		requests int // chat requests the fake saw (0: 1)
	}{
		{
			name:   "model not found names the models",
			fake:   []openaitest.Option{openaitest.WithModels("qwen3-8b", "gpt-oss-20b")},
			client: []openai.Option{openai.WithName("LM Studio")},
			model:  "llama9",
			want:   "model 'llama9' is not available at LM Studio at {base}; it has: qwen3-8b, gpt-oss-20b — pick one in the agent's settings",
			wantIs: openai.ErrModelNotFound,
		},
		{
			name:   "model not found, Ollama's words",
			fake:   []openaitest.Option{openaitest.WithModels(), openaitest.WithAnyModel(), openaitest.WithReplies(openaitest.Reply{Status: 404, Error: openaitest.APIError{Message: `model "llama9" not found, try pulling it first`, Type: "api_error"}})},
			model:  "llama9",
			want:   "model 'llama9' is not available at the OpenAI-compatible server at {base}, which lists no models — download or load one there first",
			wantIs: openai.ErrModelNotFound,
		},
		{
			name:   "API key wrong",
			fake:   []openaitest.Option{openaitest.WithAPIKey("sk-right")},
			client: []openai.Option{openai.WithKind(openai.KindOpenAI), openai.WithAPIKey("sk-wrong-key-0000")},
			want:   "OpenAI at {base} did not accept the API key (it is wrong, revoked, or lacks access) — set the right one in Settings → Models",
			wantIs: openai.ErrUnauthorized,
		},
		{
			name:   "API key missing for a compatible server",
			fake:   []openaitest.Option{openaitest.WithAPIKey("sk-right")},
			want:   "The OpenAI-compatible server at {base} asks for an API key: add one to this provider in Settings → Models",
			wantIs: openai.ErrUnauthorized,
		},
		{
			name:   "context too long",
			fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.ContextLengthExceeded(128000, 130012)})},
			want:   "the conversation is too long for the context window of model 'gpt-4o-mini' at the OpenAI-compatible server at {base} (This model's maximum context length is 128000 tokens. However, your messages resulted in 130012 tokens. Please reduce the length of the messages.) — start a new conversation, or pick a model with a larger context window",
			wantIs: openai.ErrContextTooLong,
		},
		{
			name: "context too long, llama.cpp's words",
			fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
				Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`})},
			want:   "the conversation is too long for the context window of model 'gpt-4o-mini' at the OpenAI-compatible server at {base} (the request exceeds the available context size, try increasing it) — start a new conversation, or pick a model with a larger context window",
			wantIs: openai.ErrContextTooLong,
		},
		{
			name: "rate limited twice",
			fake: []openaitest.Option{openaitest.WithReplies(
				openaitest.Reply{Status: 429, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 20 * time.Millisecond},
				openaitest.Reply{Status: 429, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 20 * time.Millisecond},
			)},
			want:     "The OpenAI-compatible server at {base} is rate limiting Deskhand (tried again once): it asks to wait 20ms before calling again",
			wantIs:   openai.ErrRateLimited,
			requests: 2,
		},
		{
			name: "rate limited for longer than the retry waits",
			fake: []openaitest.Option{openaitest.WithReplies(
				openaitest.Reply{Status: 429, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 90 * time.Second},
			)},
			client: []openai.Option{openai.WithKind(openai.KindOpenAI), openai.WithAPIKey("sk-x")},
			want:   "OpenAI at {base} is rate limiting Deskhand (tried again once): it asks to wait 1m30s before calling again",
			wantIs: openai.ErrRateLimited,
		},
		{
			name: "quota used up",
			fake: []openaitest.Option{openaitest.WithReplies(
				openaitest.Reply{Status: 429, Error: quota},
				openaitest.Reply{Status: 429, Error: quota},
			)},
			want:     "The OpenAI-compatible server at {base} refused the call: the account's quota or credit is used up — check its plan and billing (You exceeded your current quota, please check your plan and billing details.)",
			wantIs:   openai.ErrQuotaExceeded,
			requests: 2, // the SDK retries a 429 once
		},
		{
			name:   "tools not supported",
			fake:   []openaitest.Option{openaitest.WithoutTools()},
			tools:  true,
			want:   "The OpenAI-compatible server at {base} cannot call tools with model 'gpt-4o-mini': gpt-4o-mini does not support tools — pick a model that can call tools, or turn this agent's tools off",
			wantIs: openai.ErrToolsUnsupported,
		},
		{
			name: "tools not enabled in vLLM",
			fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
				Body: `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`})},
			client: []openai.Option{openai.WithName("vLLM")},
			tools:  true,
			want:   "VLLM at {base} cannot call tools with model 'gpt-4o-mini': \"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set — pick a model that can call tools, or turn this agent's tools off",
			wantIs: openai.ErrToolsUnsupported,
		},
		{
			name:     "JSON schema not supported",
			fake:     []openaitest.Option{openaitest.WithoutJSONSchema()},
			schema:   true,
			want:     "The OpenAI-compatible server at {base} cannot answer in the agent's JSON schema (structured output, response_format json_schema) with model 'gpt-4o-mini': response_format type must be one of \"text\" or \"json_object\", but got: json_schema. Deskhand does not call without the schema: pick a model or server that supports structured output, or remove the agent's response schema",
			wantIs:   openai.ErrStructuredOutputUnsupported,
			requests: 2, // a 500: the SDK tries again once
		},
		{
			name: "JSON schema refused, LM Studio's error shape",
			fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
				Body: `{"error":"'response_format.type' must be 'json_schema' or 'text'"}`})},
			client: []openai.Option{openai.WithName("LM Studio")},
			schema: true,
			want:   "LM Studio at {base} cannot answer in the agent's JSON schema (structured output, response_format json_schema) with model 'gpt-4o-mini': 'response_format.type' must be 'json_schema' or 'text'. Deskhand does not call without the schema: pick a model or server that supports structured output, or remove the agent's response schema",
			wantIs: openai.ErrStructuredOutputUnsupported,
		},
		{
			name: "schema invalid for strict mode",
			fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.APIError{
				Message: "Invalid schema for response_format 'response': In context=(), 'minLength' is not permitted.", Type: "invalid_request_error", Param: "response_format"}})},
			schema: true,
			want:   "The OpenAI-compatible server at {base} refused the agent's response schema: Invalid schema for response_format 'response': In context=(), 'minLength' is not permitted. — fix the schema in the agent's settings",
			wantIs: openai.ErrSchemaRefused,
		},
		{
			name:   "other refusal",
			fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.APIError{Message: "Invalid 'messages[0].content': string too long.", Type: "invalid_request_error"}})},
			want:   "The OpenAI-compatible server at {base} refused the request (HTTP 400): Invalid 'messages[0].content': string too long.",
			wantIs: openai.ErrRefused,
		},
		{
			name:     "server failing, no body",
			fake:     []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 502, Body: " "}, openaitest.Reply{Status: 502, Body: "<html>Bad gateway</html>"})},
			want:     "The OpenAI-compatible server at {base} failed (HTTP 502): HTTP 502 Bad Gateway",
			wantIs:   openai.ErrServerFailed,
			requests: 2,
		},
		{
			name:   "error in the stream",
			fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Content: "Half an", StreamError: openaitest.APIError{Message: "The server had an error while processing your request. Sorry about that!", Type: "server_error"}})},
			want:   "The OpenAI-compatible server at {base} failed while answering: The server had an error while processing your request. Sorry about that!",
			wantIs: openai.ErrServerFailed,
		},
		{
			name:   "stream cut off",
			fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Content: "Half an answer", Cut: true})},
			want:   "The OpenAI-compatible server at {base} stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
			wantIs: openai.ErrStreamCut,
		},
		{
			name:   "stream cut off in a tool call",
			fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"/a"}`}}, Cut: true})},
			tools:  true,
			want:   "The OpenAI-compatible server at {base} stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
			wantIs: openai.ErrStreamCut,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tt.fake...)
			m := newModel(t, srv, tt.client...)
			req := agent.ChatRequest{Model: cmpOr(tt.model, model), Messages: hi}
			if tt.tools {
				req.Tools = []agent.ToolSpec{{Name: "read_file", Description: "Read a file"}}
			}
			if tt.schema {
				req.Format = schema
			}
			var deltas strings.Builder
			got, err := m.Chat(context.Background(), req, func(d agent.Delta) { deltas.WriteString(d.Content) })
			if err == nil {
				t.Fatalf("Chat succeeded with %+v, want an error", got)
			}
			want := strings.ReplaceAll(tt.want, "{base}", m.BaseURL())
			if msg := modeltest.UserMessage(t, err); msg != want {
				t.Errorf("message = %q\nwant      %q", msg, want)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if diff := cmp.Diff(agent.ChatResponse{}, got); diff != "" {
				t.Errorf("a failed Chat returned a reply:\n%s", diff)
			}
			if n, want := len(srv.ChatRequests()), max(tt.requests, 1); n != want {
				t.Errorf("the fake got %d chat requests, want %d", n, want)
			}
			var he *openai.HTTPError
			if tt.wantIs != openai.ErrStreamCut && !errors.As(err, &he) {
				t.Errorf("error %v does not carry the server's answer", err)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestChatRetriesOnceAfterRateLimit(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(
		openaitest.Reply{Status: http.StatusTooManyRequests, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 50 * time.Millisecond},
		openaitest.Reply{Content: "Made it."},
	))
	start := time.Now()
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "Made it." {
		t.Errorf("content = %q", got.Message.Content)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("retried after %s, before the Retry-After of 50ms", waited)
	}
	if n := len(srv.ChatRequests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestChatWithoutStreamOptions(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithoutStreamOptions())
	m := newModel(t, srv)
	hi := agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}
	for i := range 2 {
		got, err := m.Chat(context.Background(), hi, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got.Message.Content != "I remember: hi" || got.PromptTokens != 0 || got.OutputTokens != 0 {
			t.Errorf("call %d: %+v, want the answer without usage", i, got)
		}
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (refused, again without stream_options, then without from the start)", len(reqs))
	}
	for i, r := range reqs {
		if got, want := r.StreamOptions != nil, i == 0; got != want {
			t.Errorf("request %d: stream_options sent = %v, want %v", i, got, want)
		}
	}
}

func TestChatBrokenStreams(t *testing.T) {
	const cut = "stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string // after "The OpenAI-compatible server at {base} "
		wantIs  error
	}{
		{
			name: "a whole JSON reply instead of a stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
			},
			want:   `did not stream its answer (it sent "application/json", not server-sent events) — is the base URL that of an OpenAI-compatible API? It usually ends in /v1`,
			wantIs: openai.ErrServerFailed,
		},
		{
			name: "closed after the headers",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler)
			},
			want:   cut,
			wantIs: openai.ErrStreamCut,
		},
		{
			name: "[DONE] without a finish_reason",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half\"}}]}\n\ndata: [DONE]\n\n")
			},
			want:   cut,
			wantIs: openai.ErrStreamCut,
		},
		{
			name: "a chunk that is not JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half\"}}]}\n\ndata: {oops\n\n")
			},
			want:   "sent a reply Deskhand cannot read (invalid character 'o' looking for beginning of object key string)",
			wantIs: openai.ErrServerFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(tt.handler)
			defer hs.Close()
			m, err := openai.New(hs.URL+"/v1", openai.WithHTTPClient(hs.Client()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("Chat = %+v, %v; want %v", got, err, tt.wantIs)
			}
			if msg, want := modeltest.UserMessage(t, err), "The OpenAI-compatible server at "+m.BaseURL()+" "+tt.want; msg != want {
				t.Errorf("message = %q\nwant      %q", msg, want)
			}
		})
	}
}
