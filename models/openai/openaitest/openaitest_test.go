package openaitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai/openaitest"
)

// client is the official SDK pointed at the fake, reading nothing from the
// environment.
func client(srv *openaitest.Server, opts ...option.RequestOption) *openai.ChatCompletionService {
	s := openai.NewChatCompletionService(append([]option.RequestOption{
		option.WithBaseURL(srv.BaseURL()), option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0),
	}, opts...)...)
	return &s
}

func params(model string, user string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(user)}}
}

// do sends a raw request and returns status, headers and body.
func do(t *testing.T, srv *openaitest.Server, method, path, body string) (int, http.Header, string) {
	t.Helper()
	resp, b := modeltest.Do(t, srv.Client(), method, srv.URL+path, body, nil)
	return resp.StatusCode, resp.Header, b
}

func TestStreamThroughTheSDK(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{
		Content: "Let me check.",
		ToolCalls: []openaitest.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Santorini, Greece"}`},
			{ID: "call_2", Name: "get_time", Arguments: `{"tz":"Europe/Athens"}`},
		},
	}))
	p := params(openaitest.DefaultModel, "weather?")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := client(srv).NewStreaming(context.Background(), p)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Fatalf("chunk %d refused by the SDK's accumulator", chunks)
		}
		chunks++
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "Let me check." || acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("content %q, finish %q", msg.Content, acc.Choices[0].FinishReason)
	}
	var calls []string
	for _, c := range msg.ToolCalls {
		calls = append(calls, c.ID+" "+c.Type+" "+c.Function.Name+" "+c.Function.Arguments)
	}
	want := []string{
		`call_1 function get_weather {"location":"Santorini, Greece"}`,
		`call_2 function get_time {"tz":"Europe/Athens"}`,
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if acc.Usage.PromptTokens != 1 || acc.Usage.CompletionTokens != int64(chunks-2) || acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
		t.Errorf("usage = %+v after %d chunks", acc.Usage, chunks)
	}
}

func TestStreamWireFormat(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{Content: "Hi there"}, openaitest.Reply{Content: "Hi"}))
	status, h, body := do(t, srv, "POST", "/v1/chat/completions",
		`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || h.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %s", status, h.Get("Content-Type"))
	}
	var events []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not a data line: %q", line)
		}
		events = append(events, data)
	}
	if n := len(events); n != 6 || events[n-1] != "[DONE]" {
		t.Fatalf("events = %q", events)
	}
	type wire struct {
		Object  string            `json:"object"`
		Choices []json.RawMessage `json:"choices"`
		Usage   json.RawMessage   `json:"usage"`
	}
	for i, e := range events[:5] {
		var w wire
		if err := json.Unmarshal([]byte(e), &w); err != nil {
			t.Fatal(err)
		}
		if w.Object != "chat.completion.chunk" {
			t.Errorf("event %d: object %q", i, w.Object)
		}
		last := i == 4
		if got := string(w.Usage); (got == "null") == last || (last && len(w.Choices) != 0) {
			t.Errorf("event %d: usage %s with %d choices", i, got, len(w.Choices))
		}
	}
	if !strings.Contains(events[0], `"delta":{"role":"assistant","content":""}`) {
		t.Errorf("first chunk: %s", events[0])
	}
	if !strings.Contains(events[3], `"delta":{},"logprobs":null,"finish_reason":"stop"`) {
		t.Errorf("finish chunk: %s", events[3])
	}

	// Without include_usage: no usage at all.
	_, _, body = do(t, srv, "POST", "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if strings.Contains(body, `"usage"`) {
		t.Errorf("usage without include_usage:\n%s", body)
	}
}

func TestWholeReplyThroughTheSDK(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{
		ToolCalls: []openaitest.ToolCall{{ID: "call_9", Name: "ask_user", Arguments: `{"question":"Which?"}`}},
	}))
	got, err := client(srv).New(context.Background(), params(openaitest.DefaultModel, "go"))
	if err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Arguments != `{"question":"Which?"}` {
		t.Errorf("reply = %+v", c)
	}
	if got.Usage.PromptTokens != 1 || got.Object != "chat.completion" {
		t.Errorf("usage %+v, object %q", got.Usage, got.Object)
	}
}

func TestErrorsThroughTheSDK(t *testing.T) {
	tests := []struct {
		name       string
		fake       []openaitest.Option
		opts       []option.RequestOption
		model      string
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{name: "unknown model", model: "gpt-9", wantStatus: 404, wantCode: "model_not_found",
			wantMsg: "The model `gpt-9` does not exist or you do not have access to it."},
		{name: "no key", fake: []openaitest.Option{openaitest.WithAPIKey("sk-good-key-1234")}, wantStatus: 401,
			wantMsg: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."},
		{name: "wrong key", fake: []openaitest.Option{openaitest.WithAPIKey("sk-good-key-1234")}, opts: []option.RequestOption{option.WithAPIKey("sk-bad-key-5678")},
			wantStatus: 401, wantCode: "invalid_api_key",
			wantMsg: "Incorrect API key provided: sk-********5678. You can find your API key at https://platform.openai.com/account/api-keys."},
		{name: "context length", fake: []openaitest.Option{openaitest.WithReplies(openaitest.Reply{Status: 400, Error: openaitest.ContextLengthExceeded(8192, 9000)})},
			wantStatus: 400, wantCode: "context_length_exceeded",
			wantMsg: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tt.fake...)
			model := tt.model
			if model == "" {
				model = openaitest.DefaultModel
			}
			_, err := client(srv, tt.opts...).New(context.Background(), params(model, "hi"))
			var ae *openai.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *openai.Error", err)
			}
			if ae.StatusCode != tt.wantStatus || ae.Code != tt.wantCode || ae.Message != tt.wantMsg {
				t.Errorf("got %d %q %q", ae.StatusCode, ae.Code, ae.Message)
			}
		})
	}
}

func TestRateLimitHeaders(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{
		Status: 429, Error: openaitest.RateLimited(openaitest.DefaultModel), RetryAfter: 1500 * time.Millisecond}))
	status, h, body := do(t, srv, "POST", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[]}`)
	if status != 429 || h.Get("Retry-After") != "2" || h.Get("Retry-After-Ms") != "1500" {
		t.Errorf("%d, Retry-After %q, retry-after-ms %q", status, h.Get("Retry-After"), h.Get("Retry-After-Ms"))
	}
	if !strings.HasPrefix(body, `{"error":{"message":"Rate limit reached for gpt-4o-mini`) || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("body = %s", body)
	}
}

func TestModelsAndLMStudio(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithLMStudio(
		openaitest.LMStudioModel{ID: "qwen3-8b", MaxContextLength: 40960, LoadedContextLength: 8192, ToolUse: true},
		openaitest.LMStudioModel{ID: "nomic-embed", Type: "embeddings", MaxContextLength: 2048},
	))
	tests := []struct{ path, want string }{
		{"/v1/models", `{"object":"list","data":[{"id":"qwen3-8b","object":"model","created":1761998400,"owned_by":"system"},{"id":"nomic-embed","object":"model","created":1761998400,"owned_by":"system"}]}`},
		{"/api/v1/models", `{"models":[{"type":"llm","publisher":"lmstudio-community","key":"qwen3-8b","display_name":"qwen3-8b","architecture":"llama","loaded_instances":[{"id":"qwen3-8b","config":{"context_length":8192}}],"max_context_length":40960,"format":"gguf","capabilities":{"vision":false,"trained_for_tool_use":true}},{"type":"embeddings","publisher":"lmstudio-community","key":"nomic-embed","display_name":"nomic-embed","architecture":"llama","loaded_instances":[],"max_context_length":2048,"format":"gguf"}]}`},
		{"/api/v0/models/qwen3-8b", `{"id":"qwen3-8b","object":"model","type":"llm","publisher":"lmstudio-community","arch":"llama","compatibility_type":"gguf","quantization":"Q4_K_M","state":"loaded","max_context_length":40960,"capabilities":["tool_use"]}`},
	}
	for _, tt := range tests {
		status, _, body := do(t, srv, "GET", tt.path, "")
		if status != 200 || strings.TrimSpace(body) != tt.want {
			t.Errorf("GET %s = %d\n%s\nwant\n%s", tt.path, status, body, tt.want)
		}
	}
	if status, _, _ := do(t, openaitest.NewServer(t), "GET", "/api/v0/models", ""); status != 404 {
		t.Errorf("without WithLMStudio, /api/v0/models = %d", status)
	}
}

func TestRecorder(t *testing.T) {
	srv := openaitest.NewServer(t)
	do(t, srv, "POST", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
		"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"},"strict":true}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.WaitChatRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	req := srv.ChatRequests()[0]
	if req.Messages[0].Text() != "ab" || req.Tools[0].Function.Name != "f" || req.ResponseFormat.JSONSchema.Name != "r" || !*req.ResponseFormat.JSONSchema.Strict {
		t.Errorf("decoded = %+v", req)
	}
	if n := len(srv.ChatBodies()); n != 1 {
		t.Errorf("%d bodies", n)
	}
}
