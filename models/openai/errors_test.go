package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

// errSetup is how a case of TestChatErrors is set up: the fake's options,
// the adapter's, and the chat requests the fake is to see (0: 1).
type errSetup struct {
	fake     []openaitest.Option
	client   []openai.Option
	requests int
}

// TestChatErrors: the failures only OpenAI's API and the compatible
// servers have (those every adapter has are the conformance suite's).
func TestChatErrors(t *testing.T) {
	quota := openaitest.APIError{
		Message: "You exceeded your current quota, please check your plan and billing details.", Type: "insufficient_quota", Code: "insufficient_quota"}
	tools := agent.ChatRequest{Tools: []agent.ToolSpec{{Name: "read_file", Description: "Read a file"}}}
	schema := agent.ChatRequest{Format: []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`)}
	modeltest.ChatErrors(t, model, func(t *testing.T, s errSetup) (modeltest.Model, func(*testing.T, error)) {
		srv := openaitest.NewServer(t, s.fake...)
		return newModel(t, srv, s.client...), func(t *testing.T, err error) {
			if n, want := len(srv.ChatRequests()), max(s.requests, 1); n != want {
				t.Errorf("the fake got %d chat requests, want %d", n, want)
			}
			var he *openai.HTTPError
			if !errors.Is(err, openai.ErrStreamCut) && !errors.As(err, &he) {
				t.Errorf("error %v does not carry the server's answer", err)
			}
		}
	}, []modeltest.ErrorCase[errSetup]{
		{
			Name:  "model not found names the models",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithModels("qwen3-8b", "gpt-oss-20b")}, client: []openai.Option{openai.WithName("LM Studio")}},
			Req:   agent.ChatRequest{Model: "llama9"},
			Want: modeltest.Want{
				Says: "model 'llama9' is not available at LM Studio at {base}; it has: qwen3-8b, gpt-oss-20b — pick one in the agent's settings",
				Is:   openai.ErrModelNotFound,
			},
		},
		{
			// OpenAI's own words, and a refused key is not retried.
			Name:  "API key wrong",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithAPIKey("sk-right")}, client: []openai.Option{openai.WithKind(openai.KindOpenAI), openai.WithAPIKey("sk-wrong-key-0000")}},
			Want: modeltest.Want{
				Says: "OpenAI at {base} did not accept the API key (it is wrong, revoked, or lacks access) — set the right one in Settings → Models",
				Is:   openai.ErrUnauthorized,
			},
		},
		{
			Name: "model not found, Ollama's words",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithModels(), openaitest.WithAnyModel(), openaitest.WithReplies(openaitest.Reply{Status: 404,
				Error: openaitest.APIError{Message: `model "llama9" not found, try pulling it first`, Type: "api_error"}})}},
			Req: agent.ChatRequest{Model: "llama9"},
			Want: modeltest.Want{
				Says: "model 'llama9' is not available at the OpenAI-compatible server at {base}, which lists no models — download or load one there first",
				Is:   openai.ErrModelNotFound,
			},
		},
		{
			Name:  "API key missing for a compatible server",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithAPIKey("sk-right")}},
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} asks for an API key: add one to this provider in Settings → Models",
				Is:   openai.ErrUnauthorized,
			},
		},
		{
			Name:  "context too long",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.ContextLengthExceeded(128000, 130012)})}},
			Want: modeltest.Want{
				Says: "the conversation is too long for the context window of model 'gpt-4o-mini' at the OpenAI-compatible server at {base} (This model's maximum context length is 128000 tokens. However, your messages resulted in 130012 tokens. Please reduce the length of the messages.) — start a new conversation, or pick a model with a larger context window",
				Is:   openai.ErrContextTooLong,
			},
		},
		{
			Name: "context too long, llama.cpp's words",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
				Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}`})}},
			Want: modeltest.Want{
				Says: "the conversation is too long for the context window of model 'gpt-4o-mini' at the OpenAI-compatible server at {base} (the request exceeds the available context size, try increasing it) — start a new conversation, or pick a model with a larger context window",
				Is:   openai.ErrContextTooLong,
			},
		},
		{
			Name: "rate limited for longer than the retry waits",
			Setup: errSetup{
				fake:   []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 429, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 90 * time.Second})},
				client: []openai.Option{openai.WithKind(openai.KindOpenAI), openai.WithAPIKey("sk-x")},
			},
			Want: modeltest.Want{
				Says: "OpenAI at {base} is rate limiting Deskhand (tried again once): it asks to wait 1m30s before calling again",
				Is:   openai.ErrRateLimited,
			},
		},
		{
			Name: "quota used up",
			Setup: errSetup{
				fake:     []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 429, Error: quota}, openaitest.Reply{Status: 429, Error: quota})},
				requests: 2, // the SDK retries a 429 once
			},
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} refused the call: the account's quota or credit is used up — check its plan and billing (You exceeded your current quota, please check your plan and billing details.)",
				Is:   openai.ErrQuotaExceeded,
			},
		},
		{
			Name:  "tools not supported",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithoutTools()}},
			Req:   tools,
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} cannot call tools with model 'gpt-4o-mini': gpt-4o-mini does not support tools — pick a model that can call tools, or turn this agent's tools off",
				Is:   openai.ErrToolsUnsupported,
			},
		},
		{
			Name: "tools not enabled in vLLM",
			Setup: errSetup{
				fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
					Body: `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`})},
				client: []openai.Option{openai.WithName("vLLM")},
			},
			Req: tools,
			Want: modeltest.Want{
				Says: "VLLM at {base} cannot call tools with model 'gpt-4o-mini': \"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set — pick a model that can call tools, or turn this agent's tools off",
				Is:   openai.ErrToolsUnsupported,
			},
		},
		{
			Name:  "JSON schema not supported",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithoutJSONSchema()}, requests: 2}, // a 500: the SDK tries again once
			Req:   schema,
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} cannot answer in the agent's JSON schema (structured output, response_format json_schema) with model 'gpt-4o-mini': response_format type must be one of \"text\" or \"json_object\", but got: json_schema. Deskhand does not call without the schema: pick a model or server that supports structured output, or remove the agent's response schema",
				Is:   openai.ErrStructuredOutputUnsupported,
			},
		},
		{
			Name: "JSON schema refused, LM Studio's error shape",
			Setup: errSetup{
				fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
					Body: `{"error":"'response_format.type' must be 'json_schema' or 'text'"}`})},
				client: []openai.Option{openai.WithName("LM Studio")},
			},
			Req: schema,
			Want: modeltest.Want{
				Says: "LM Studio at {base} cannot answer in the agent's JSON schema (structured output, response_format json_schema) with model 'gpt-4o-mini': 'response_format.type' must be 'json_schema' or 'text'. Deskhand does not call without the schema: pick a model or server that supports structured output, or remove the agent's response schema",
				Is:   openai.ErrStructuredOutputUnsupported,
			},
		},
		{
			Name: "schema invalid for strict mode",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.APIError{
				Message: "Invalid schema for response_format 'response': In context=(), 'minLength' is not permitted.", Type: "invalid_request_error", Param: "response_format"}})}},
			Req: schema,
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} refused the agent's response schema: Invalid schema for response_format 'response': In context=(), 'minLength' is not permitted. — fix the schema in the agent's settings",
				Is:   openai.ErrSchemaRefused,
			},
		},
		{
			Name: "other refusal",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400,
				Error: openaitest.APIError{Message: "Invalid 'messages[0].content': string too long.", Type: "invalid_request_error"}})}},
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} refused the request (HTTP 400): Invalid 'messages[0].content': string too long.",
				Is:   openai.ErrRefused,
			},
		},
		{
			Name: "server failing, no body",
			Setup: errSetup{
				fake:     []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 502, Body: " "}, openaitest.Reply{Status: 502, Body: "<html>Bad gateway</html>"})},
				requests: 2,
			},
			Want: modeltest.Want{Says: "The OpenAI-compatible server at {base} failed (HTTP 502): HTTP 502 Bad Gateway", Is: openai.ErrServerFailed},
		},
		{
			Name:  "stream cut off in a tool call",
			Setup: errSetup{fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"/a"}`}}, Cut: true})}},
			Req:   tools,
			Want: modeltest.Want{
				Says: "The OpenAI-compatible server at {base} stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
				Is:   openai.ErrStreamCut,
			},
		},
	})
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
