package anthropictest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// do sends a raw request to the fake, with a key and anthropic-version
// unless headers says otherwise ("" deletes one), and returns the answer
// with its body read.
func do(t *testing.T, srv *anthropictest.Server, method, path, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	h := http.Header{}
	h.Set("X-Api-Key", "sk-test")
	h.Set("Anthropic-Version", anthropictest.APIVersion)
	h.Set("Content-Type", "application/json")
	for k, v := range headers {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	return modeltest.Do(t, srv.Client(), method, srv.URL+path, body, h)
}

type sse struct {
	Event string
	Data  map[string]any
}

// events parses a text/event-stream body, checking that each event's
// data names the same type as its event line.
func events(t *testing.T, body string) []sse {
	t.Helper()
	var out []sse
	for _, chunk := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		ev, data, ok := strings.Cut(chunk, "\n")
		if !ok || !strings.HasPrefix(ev, "event: ") || !strings.HasPrefix(data, "data: ") {
			t.Fatalf("malformed event %q", chunk)
		}
		e := sse{Event: strings.TrimPrefix(ev, "event: ")}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &e.Data); err != nil {
			t.Fatalf("event %q: %v", chunk, err)
		}
		if e.Data["type"] != e.Event {
			t.Errorf("event %s carries data of type %v", e.Event, e.Data["type"])
		}
		out = append(out, e)
	}
	return out
}

const scripted = `{"model":"claude-sonnet-4-5-20250929","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"What time is it in Oslo?"}]}`

func TestStreamedReply(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.Reply{
		Thinking: "Use the tool.",
		Text:     "Let me check.",
		ToolUses: []anthropictest.ToolUse{{ID: "toolu_01X", Name: "now", Input: `{"city":"Oslo","tz":"Europe/Oslo"}`}},
	}))
	resp, body := do(t, srv, "POST", "/v1/messages", scripted, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" || !strings.HasPrefix(resp.Header.Get("Request-Id"), "req_") {
		t.Fatalf("%d %q request-id %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Request-Id"))
	}
	evs := events(t, body)
	var names []string
	for _, e := range evs {
		name := e.Event
		if d, ok := e.Data["delta"].(map[string]any); ok && e.Event == "content_block_delta" {
			name += ":" + d["type"].(string)
		}
		if cb, ok := e.Data["content_block"].(map[string]any); ok {
			name += ":" + cb["type"].(string)
		}
		names = append(names, name)
	}
	want := []string{
		"message_start",
		"content_block_start:thinking", "ping",
		"content_block_delta:thinking_delta", "content_block_delta:thinking_delta", "content_block_delta:thinking_delta",
		"content_block_delta:signature_delta", "content_block_stop",
		"content_block_start:text",
		"content_block_delta:text_delta", "content_block_delta:text_delta", "content_block_delta:text_delta", "content_block_stop",
		"content_block_start:tool_use",
		"content_block_delta:input_json_delta", "content_block_delta:input_json_delta", "content_block_delta:input_json_delta",
		"content_block_delta:input_json_delta", "content_block_delta:input_json_delta", "content_block_delta:input_json_delta",
		"content_block_stop",
		"message_delta", "message_stop",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}

	start := evs[0].Data["message"].(map[string]any)
	if start["role"] != "assistant" || start["model"] != anthropictest.DefaultModel || len(start["content"].([]any)) != 0 ||
		start["stop_reason"] != nil || !strings.HasPrefix(start["id"].(string), "msg_") {
		t.Errorf("message_start = %v", start)
	}
	var input, text string
	for _, e := range evs {
		if d, ok := e.Data["delta"].(map[string]any); ok {
			if p, ok := d["partial_json"].(string); ok {
				input += p
			}
			if s, ok := d["text"].(string); ok {
				text += s
			}
		}
	}
	if input != `{"city":"Oslo","tz":"Europe/Oslo"}` || text != "Let me check." {
		t.Errorf("input %q, text %q", input, text)
	}
	if first := evs[14].Data["delta"].(map[string]any)["partial_json"]; first != "" {
		t.Errorf("first input_json_delta = %q, want an empty piece", first)
	}
	md := evs[len(evs)-2].Data
	if d := md["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message_delta = %v", md)
	}
	if u := md["usage"].(map[string]any); u["input_tokens"] != float64(6) || u["output_tokens"] != float64(13) {
		t.Errorf("usage = %v", u)
	}
	if idx := evs[13].Data["index"]; idx != float64(2) {
		t.Errorf("the tool_use block has index %v, want 2", idx)
	}
}

// TestSDKReadsTheFake: the SDK accumulates the fake's stream into the
// message the fake answers whole.
func TestSDKReadsTheFake(t *testing.T) {
	reply := anthropictest.Reply{
		Text:        "Calling. ",
		ToolUses:    []anthropictest.ToolUse{{ID: "toolu_01", Name: "look", Input: `{"q":"naïve café ☕ sentence","n":[1,2,3]}`}},
		InputTokens: 5, CacheReadInputTokens: 20, OutputTokens: 9,
	}
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(reply, reply))
	client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL), option.WithAPIKey("sk"), option.WithHTTPClient(srv.Client()))
	params := sdk.MessageNewParams{Model: anthropictest.DefaultModel, MaxTokens: 100, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("go"))}}

	stream := client.Messages.NewStreaming(context.Background(), params)
	defer stream.Close()
	var streamed sdk.Message
	for stream.Next() {
		if err := streamed.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	whole, err := client.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Model, StopReason       string
		Content                 []string
		Input, Output, CacheRdr int64
	}
	see := func(m *sdk.Message) view {
		v := view{Model: string(m.Model), StopReason: string(m.StopReason), Input: m.Usage.InputTokens, Output: m.Usage.OutputTokens, CacheRdr: m.Usage.CacheReadInputTokens}
		for _, b := range m.Content {
			v.Content = append(v.Content, b.Type+" "+b.ID+" "+b.Name+" "+b.Text+string(b.Input))
		}
		return v
	}
	want := view{Model: anthropictest.DefaultModel, StopReason: "tool_use", Input: 5, Output: 9, CacheRdr: 20,
		Content: []string{"text   Calling. ", `tool_use toolu_01 look {"q":"naïve café ☕ sentence","n":[1,2,3]}`}}
	if diff := cmp.Diff(want, see(&streamed)); diff != "" {
		t.Errorf("streamed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, see(whole)); diff != "" {
		t.Errorf("whole (-want +got):\n%s", diff)
	}
	if h := srv.MessageCalls()[0].Header; h.Get("Authorization") != "Bearer sk" {
		t.Errorf("the SDK's WithAPIKey sent Authorization %q", h.Get("Authorization"))
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		opts       []anthropictest.Option
		method     string
		path, body string
		headers    map[string]string
		wantStatus int
		wantType   string
		wantMsg    string
		wantRetry  string
	}{
		{name: "unknown model", body: `{"model":"claude-nope","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 404, wantType: "not_found_error", wantMsg: "model: claude-nope"},
		{name: "no key", headers: map[string]string{"X-Api-Key": ""}, body: scripted,
			wantStatus: 401, wantType: "authentication_error", wantMsg: "x-api-key header is required"},
		{name: "wrong key", opts: []anthropictest.Option{anthropictest.WithAPIKey("sk-right")}, body: scripted,
			wantStatus: 401, wantType: "authentication_error", wantMsg: "invalid x-api-key"},
		{name: "right key as bearer", opts: []anthropictest.Option{anthropictest.WithAPIKey("sk-right")}, method: "GET", path: "/v1/models",
			headers: map[string]string{"X-Api-Key": "", "Authorization": "Bearer sk-right"}, wantStatus: 200},
		{name: "no version", headers: map[string]string{"Anthropic-Version": ""}, body: scripted,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "anthropic-version: header is required"},
		{name: "unknown route", method: "GET", path: "/v1/nope", wantStatus: 404, wantType: "not_found_error", wantMsg: "Not Found"},
		{name: "rate limited", opts: []anthropictest.Option{anthropictest.WithReplies(anthropictest.RateLimited(17))}, body: scripted,
			wantStatus: 429, wantType: "rate_limit_error", wantRetry: "17",
			wantMsg: "This request would exceed your organization's rate limit of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."},
		{name: "overloaded", opts: []anthropictest.Option{anthropictest.WithReplies(anthropictest.Overloaded)}, body: scripted,
			wantStatus: 529, wantType: "overloaded_error", wantMsg: "Overloaded"},
		{name: "prompt too long", opts: []anthropictest.Option{anthropictest.WithModels(anthropictest.ModelInfo{ID: "claude-small", MaxInputTokens: 4})},
			body:       `{"model":"claude-small","max_tokens":10,"system":"You are terse.","messages":[{"role":"user","content":"What time is it?"}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "prompt is too long: 7 tokens > 4 maximum"},
		{name: "max_tokens over the model's", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":64001,"messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929"},
		{name: "no max_tokens", body: `{"model":"claude-sonnet-4-5-20250929","messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "max_tokens: Field required"},
		{name: "not JSON", body: `{`, wantStatus: 400, wantType: "invalid_request_error", wantMsg: "There was an error parsing the body of your request: it is not valid JSON"},
		{name: "empty text", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "messages: text content blocks must be non-empty"},
		{name: "tool_use without result", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"now","input":{}}]},
				{"role":"user","content":"well?"}]}`,
			wantStatus: 400, wantType: "invalid_request_error",
			wantMsg: "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{name: "tool_result answering nothing", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":"Hello."},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`,
			wantStatus: 400, wantType: "invalid_request_error",
			wantMsg: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{name: "tool_result after text", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"now","input":{}}]},
				{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"toolu_1"}]}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "messages.2: tool_result blocks must come before any other content in a user message"},
		{name: "bad tool_use id", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"now","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"call.1"}]}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
		{name: "tool schema not an object", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
				"tools":[{"name":"now","input_schema":{"type":"string"}}]}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "tools.0.custom.input_schema.type: Input should be 'object'"},
		{name: "structured output without additionalProperties", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
				"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
			wantStatus: 400, wantType: "invalid_request_error",
			wantMsg: "output_config.format.schema: schema: For 'object' type, 'additionalProperties' must be explicitly set to false"},
		{name: "structured output with a constraint", body: `{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
				"output_config":{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false,"properties":{"minimum":{"type":"integer","minimum":0}}}}}}`,
			wantStatus: 400, wantType: "invalid_request_error",
			wantMsg: "output_config.format.schema: schema.properties.minimum: property 'minimum' is not supported"},
		{name: "model without structured outputs", opts: []anthropictest.Option{anthropictest.WithModels(anthropictest.ModelInfo{ID: "claude-old", NoStructuredOutputs: true})},
			body: `{"model":"claude-old","max_tokens":10,"messages":[{"role":"user","content":"hi"}],
				"output_config":{"format":{"type":"json_schema","schema":{"type":"string"}}}}`,
			wantStatus: 400, wantType: "invalid_request_error", wantMsg: "output_config.format: structured outputs are not supported by claude-old"},
		{name: "unknown model described", method: "GET", path: "/v1/models/claude-nope", wantStatus: 404, wantType: "not_found_error", wantMsg: "model: claude-nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, tt.opts...)
			method, path := tt.method, tt.path
			if method == "" {
				method, path = "POST", "/v1/messages"
			}
			resp, body := do(t, srv, method, path, tt.body, tt.headers)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == 200 {
				return
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("%v in %s", err, body)
			}
			if e.Type != "error" || e.Error.Type != tt.wantType || e.Error.Message != tt.wantMsg {
				t.Errorf("error %s %q\nwant  %s %q", e.Error.Type, e.Error.Message, tt.wantType, tt.wantMsg)
			}
			if !strings.HasPrefix(e.RequestID, "req_") || resp.Header.Get("Request-Id") != e.RequestID {
				t.Errorf("request_id %q, header %q", e.RequestID, resp.Header.Get("Request-Id"))
			}
			if got := resp.Header.Get("Retry-After"); got != tt.wantRetry {
				t.Errorf("retry-after = %q, want %q", got, tt.wantRetry)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
		})
	}
}

func TestStreamInterrupted(t *testing.T) {
	t.Run("error event", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.Reply{Text: "Once upon a time",
			StreamError: &anthropictest.APIError{Type: "overloaded_error", Message: "Overloaded"}}))
		resp, body := do(t, srv, "POST", "/v1/messages", scripted, nil)
		evs := events(t, body)
		last := evs[len(evs)-1]
		if resp.StatusCode != 200 || last.Event != "error" || len(evs) != 5 {
			t.Fatalf("%d, events %v", resp.StatusCode, evs)
		}
		if diff := cmp.Diff(map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}}, last.Data); diff != "" {
			t.Errorf("error event (-want +got):\n%s", diff)
		}
	})
	t.Run("cut", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithCutStream())
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(scripted))
		req.Header.Set("X-Api-Key", "k")
		req.Header.Set("Anthropic-Version", anthropictest.APIVersion)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Errorf("the body ended cleanly: %s", body)
		}
		if strings.Contains(string(body), "message_stop") || !strings.Contains(string(body), "text_delta") {
			t.Errorf("body = %s", body)
		}
	})
	t.Run("slow, client gone", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithEventDelay(50*time.Millisecond))
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/messages", strings.NewReader(scripted))
		req.Header.Set("X-Api-Key", "k")
		req.Header.Set("Anthropic-Version", anthropictest.APIVersion)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(resp.Body)
		if line, err := r.ReadString('\n'); err != nil || line != "event: message_start\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		cancel()
		resp.Body.Close()
		wait, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		if err := srv.WaitAborted(wait, 1); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWholeReply(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.Reply{Text: "Hi.", InputTokens: 3, OutputTokens: 2}))
	resp, body := do(t, srv, "POST", "/v1/messages", strings.Replace(scripted, `"stream":true,`, "", 1), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "id")
	want := map[string]any{
		"model": anthropictest.DefaultModel, "type": "message", "role": "assistant",
		"content":     []any{map[string]any{"type": "text", "text": "Hi."}},
		"stop_reason": "end_turn", "stop_sequence": nil, "stop_details": nil,
		"usage": map[string]any{"input_tokens": 3.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 0.0,
			"cache_creation": map[string]any{"ephemeral_5m_input_tokens": 0.0, "ephemeral_1h_input_tokens": 0.0},
			"output_tokens":  2.0, "service_tier": "standard", "inference_geo": "global"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestModels(t *testing.T) {
	var models []anthropictest.ModelInfo
	for _, id := range []string{"claude-a", "claude-b", "claude-c", "claude-d", "claude-e"} {
		models = append(models, anthropictest.ModelInfo{ID: id})
	}
	srv := anthropictest.NewServer(t, anthropictest.WithModels(models...))
	type pageView struct {
		IDs             []string
		HasMore         bool
		FirstID, LastID any
	}
	list := func(query string) pageView {
		t.Helper()
		resp, body := do(t, srv, "GET", "/v1/models"+query, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", query, resp.StatusCode, body)
		}
		var p struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool `json:"has_more"`
			FirstID any  `json:"first_id"`
			LastID  any  `json:"last_id"`
		}
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		v := pageView{HasMore: p.HasMore, FirstID: p.FirstID, LastID: p.LastID, IDs: []string{}}
		for _, m := range p.Data {
			v.IDs = append(v.IDs, m.ID)
		}
		return v
	}
	for query, want := range map[string]pageView{
		"":                            {IDs: []string{"claude-a", "claude-b", "claude-c", "claude-d", "claude-e"}, FirstID: "claude-a", LastID: "claude-e"},
		"?limit=2":                    {IDs: []string{"claude-a", "claude-b"}, HasMore: true, FirstID: "claude-a", LastID: "claude-b"},
		"?limit=2&after_id=claude-b":  {IDs: []string{"claude-c", "claude-d"}, HasMore: true, FirstID: "claude-c", LastID: "claude-d"},
		"?limit=2&after_id=claude-d":  {IDs: []string{"claude-e"}, FirstID: "claude-e", LastID: "claude-e"},
		"?limit=2&before_id=claude-d": {IDs: []string{"claude-b", "claude-c"}, HasMore: true, FirstID: "claude-b", LastID: "claude-c"},
		"?limit=2&after_id=claude-e":  {IDs: []string{}},
	} {
		if diff := cmp.Diff(want, list(query)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", query, diff)
		}
	}

	resp, body := do(t, srv, "GET", "/v1/models/claude-c", "", nil)
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	caps := m["capabilities"].(map[string]any)
	if m["type"] != "model" || m["max_input_tokens"] != 200000.0 || m["max_tokens"] != 64000.0 || m["lifecycle"] != "active" ||
		caps["structured_outputs"].(map[string]any)["supported"] != true || len(caps) != 10 || m["created_at"] != "1970-01-01T00:00:00Z" {
		t.Errorf("model = %v", m)
	}
}

func TestEchoReply(t *testing.T) {
	req := func(msgs ...anthropictest.Message) anthropictest.Request {
		return anthropictest.Request{Messages: msgs}
	}
	text := func(role, s string) anthropictest.Message {
		return anthropictest.Message{Role: role, Content: anthropictest.Blocks{{Type: "text", Text: s}}}
	}
	if got := anthropictest.EchoReply(req(text("user", "a"), text("assistant", "b"), text("user", "c"))); got.Text != "I remember: a | c" {
		t.Errorf("echo = %+v", got)
	}
	ask := anthropictest.EchoReply(req(text("user", anthropictest.AskPrefix+"Which file?")))
	if len(ask.ToolUses) != 1 || ask.ToolUses[0].Name != "ask_user" || ask.ToolUses[0].Input != `{"question":"Which file?"}` {
		t.Errorf("ask = %+v", ask)
	}
	answered := anthropictest.EchoReply(req(text("user", "x"), anthropictest.Message{Role: "user", Content: anthropictest.Blocks{
		{Type: "tool_result", ToolUseID: "toolu_1", Content: anthropictest.Blocks{{Type: "text", Text: "notes.txt"}}}}}))
	if answered.Text != "You answered: notes.txt" {
		t.Errorf("answered = %+v", answered)
	}
}

// TestRecorder: requests are recorded decoded, refused ones included.
func TestRecorder(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.WithAPIKey("sk-right"))
	do(t, srv, "POST", "/v1/messages", `{"model":"m","max_tokens":5,"system":"S","messages":[{"role":"user","content":"hi"}],
		"tools":[{"name":"t","input_schema":{"type":"object"}}]}`, nil)
	reqs := srv.MessageRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.Model != "m" || *r.MaxTokens != 5 || r.System.Text() != "S" || r.Messages[0].Content.Text() != "hi" || r.Tools[0].Name != "t" {
		t.Errorf("recorded %+v", r)
	}
	if c := srv.MessageCalls(); len(c) != 1 || c[0].Header.Get("X-Api-Key") != "sk-test" {
		t.Errorf("calls %+v", c)
	}
}
