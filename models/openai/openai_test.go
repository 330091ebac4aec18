package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

const model = openaitest.DefaultModel

// newModel points a Model at the fake, through the fake's own client so
// its connections close with it.
func newModel(t testing.TB, srv *openaitest.Server, opts ...openai.Option) *openai.Model {
	t.Helper()
	m, err := openai.New(srv.BaseURL(), append([]openai.Option{openai.WithHTTPClient(srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseBaseURL(t *testing.T) {
	modeltest.CheckBaseURLs(t, []modeltest.BaseURL{
		{In: "http://127.0.0.1:1234/v1", Want: "http://127.0.0.1:1234/v1"},
		{In: " http://127.0.0.1:1234/v1/ ", Want: "http://127.0.0.1:1234/v1"},
		{In: "localhost:8080/v1", Want: "http://localhost:8080/v1"},
		{In: "http://localhost:1234", Want: "http://localhost:1234/v1"},
		{In: "HTTP://[::1]:8000/", Want: "http://[::1]:8000/v1"},
		{In: "https://openrouter.ai/api/v1", Want: "https://openrouter.ai/api/v1"},
		{In: "https://api.openai.com/v1", Want: "https://api.openai.com/v1"},
		{In: "http://u:secret@proxy.lan:4000/v1", Want: "http://u:xxxxx@proxy.lan:4000/v1"},
		{In: "", WantErr: true},
		{In: "ftp://example.com/v1", WantErr: true},
		{In: "http://:1234/v1", WantErr: true},
		{In: "http://localhost:99999/v1", WantErr: true},
		{In: "http://localhost:0/v1", WantErr: true},
	}, openai.ParseBaseURL, nil)
}

func TestNew(t *testing.T) {
	m, err := openai.New("")
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != openai.KindOpenAI || m.BaseURL() != openai.DefaultBaseURL || m.Who() != "OpenAI" {
		t.Errorf("New(\"\") = %s at %s (%q), want OpenAI's API", m.Kind(), m.BaseURL(), m.Who())
	}
	m, err = openai.New("http://u:secret@127.0.0.1:1234/v1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != openai.KindCompatible || m.BaseURL() != "http://127.0.0.1:1234/v1" {
		t.Errorf("compatible: %s at %s", m.Kind(), m.BaseURL())
	}
	if want := "The OpenAI-compatible server at http://127.0.0.1:1234/v1"; m.Who() != want {
		t.Errorf("Who() = %q, want %q", m.Who(), want)
	}
	m, err = openai.New("127.0.0.1:1234", openai.WithName("LM Studio"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "LM Studio at http://127.0.0.1:1234/v1"; m.Who() != want {
		t.Errorf("Who() = %q, want %q", m.Who(), want)
	}
	if _, err := openai.New("", openai.WithKind(openai.KindCompatible)); err == nil {
		t.Error("a compatible server without a base URL was accepted")
	}
	if _, err := openai.New("http://x/v1", openai.WithKind("anthropic")); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

func TestChatStreamsReply(t *testing.T) {
	modeltest.Chats(t, model, func(t *testing.T, opts []openaitest.Option) (modeltest.Model, func(*testing.T, error)) {
		srv := openaitest.NewServer(t, opts...)
		return newModel(t, srv), func(t *testing.T, _ error) {
			bodies := srv.ChatBodies()
			if len(bodies) != 1 {
				t.Fatalf("the fake got %d chat requests, want 1", len(bodies))
			}
			modeltest.JSONEqual(t, "request", bodies[0], `{
				"model": "gpt-4o-mini",
				"stream": true,
				"stream_options": {"include_usage": true},
				"messages": [
					{"role":"system","content":"Be brief."},
					{"role":"user","content":"My name is Ada."},
					{"role":"assistant","content":"Hello Ada."},
					{"role":"user","content":"What is my name?"}]}`)
		}
	}, []modeltest.ChatCase[[]openaitest.Option]{
		modeltest.EchoCase[[]openaitest.Option](model, 12, "stop"), // output: chunks after the first
	})
}

func TestChatNilOnDeltaAndThinking(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(
		openaitest.Reply{Reasoning: "The user greets.", Content: "Hi!", UsageInLastChunk: true, PromptTokens: 40, CompletionTokens: 9},
		openaitest.Reply{Content: "Again."},
	))
	m := newModel(t, srv)
	hi := agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}
	var deltas []agent.Delta
	got, err := m.Chat(context.Background(), hi, func(d agent.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "Hi!" || got.PromptTokens != 40 || got.OutputTokens != 9 {
		t.Errorf("reply = %+v, want Hi! with the usage of the last chunk", got)
	}
	want := []agent.Delta{{Thinking: "The "}, {Thinking: "user "}, {Thinking: "greets."}, {Content: "Hi!"}}
	if diff := cmp.Diff(want, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if got, err := m.Chat(context.Background(), hi, nil); err != nil || got.Message.Content != "Again." {
		t.Errorf("with a nil onDelta: %+v, %v", got, err)
	}
}

func TestChatToolCallRoundTrip(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(
		openaitest.Reply{Content: "Let me look.", ToolCalls: []openaitest.ToolCall{
			{ID: "call_FXoAjBUMcVv1k40fficJ9cSs", Name: "read_file", Arguments: `{"path":"/home/u/a.txt","max_bytes":100}`},
			{ID: "call_2", Name: "now", Arguments: ``},
		}},
		openaitest.Reply{Content: "The file says hello."},
	))
	modeltest.ToolRoundTrip(t, newModel(t, srv), modeltest.RoundTrip{
		Req: agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "read /home/u/a.txt"}}, Tools: modeltest.RoundTripTools()},
		First: agent.ChatResponse{
			Message: agent.Message{Role: agent.RoleAssistant, Content: "Let me look.", ToolCalls: []agent.ToolCall{
				{ID: "call_FXoAjBUMcVv1k40fficJ9cSs", Name: "read_file", Arguments: json.RawMessage(`{"path":"/home/u/a.txt","max_bytes":100}`)},
				{ID: "call_2", Name: "now", Arguments: json.RawMessage(`{}`)},
			}},
			Model:        model,
			PromptTokens: 2,  // words of the request, as the fake counts
			OutputTokens: 11, // chunks after the first
			DoneReason:   "tool_calls",
		},
		FirstDeltas: []agent.Delta{{Content: "Let "}, {Content: "me "}, {Content: "look."}},
		Results: []agent.Message{
			{Role: agent.RoleTool, Content: "hello", ToolCallID: "call_FXoAjBUMcVv1k40fficJ9cSs", ToolName: "read_file"},
			{Role: agent.RoleTool, Content: "noon", ToolCallID: "call_2", ToolName: "now"},
		},
		Final: "The file says hello.",
		Sent:  srv.ChatBodies,
		Wire: map[string]string{
			"messages": `[
				{"role":"user","content":"read /home/u/a.txt"},
				{"role":"assistant","content":"Let me look.","tool_calls":[
					{"id":"call_FXoAjBUMcVv1k40fficJ9cSs","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"/home/u/a.txt\",\"max_bytes\":100}"}},
					{"id":"call_2","type":"function","function":{"name":"now","arguments":"{}"}}]},
				{"role":"tool","content":"hello","tool_call_id":"call_FXoAjBUMcVv1k40fficJ9cSs"},
				{"role":"tool","content":"noon","tool_call_id":"call_2"}]`,
			"tools": `[
				{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","required":["path"],"additionalProperties":false,
					"properties":{"path":{"type":"string","description":"file path"},"max_bytes":{"type":"integer"}}}}},
				{"type":"function","function":{"name":"now","description":"Current time","parameters":{"type":"object","properties":{}}}}]`,
		},
		// A schema's properties keep their order on the wire.
		InOrder: []string{`"properties":{"path":{"type":"string","description":"file path"},`},
	})
}

func TestChatToolCallsWithoutIDsOrValidJSON(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{ToolCalls: []openaitest.ToolCall{
		{Name: "read_file", Arguments: `{"path": "/tmp/a`}, // cut short by max_tokens
	}, FinishReason: "length"}))
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "read"}},
		Tools: []agent.ToolSpec{{Name: "read_file"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Message.ToolCalls) != 1 {
		t.Fatalf("calls = %+v", got.Message.ToolCalls)
	}
	call := got.Message.ToolCalls[0]
	if !strings.HasPrefix(call.ID, "call_") || len(call.ID) != len("call_")+24 {
		t.Errorf("minted ID = %q", call.ID)
	}
	if string(call.Arguments) != `{"path": "/tmp/a` {
		t.Errorf("arguments = %s, want them as the model wrote them", call.Arguments)
	}
	if got.DoneReason != "length" {
		t.Errorf("done reason = %q", got.DoneReason)
	}
}

func TestChatTranscriptRepair(t *testing.T) {
	srv := openaitest.NewServer(t)
	msgs := []agent.Message{
		{Role: agent.RoleUser, Content: "two things"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "call_a", Name: "one", Arguments: json.RawMessage(`{}`)},
			{ID: "call_b", Name: "two"},
		}},
		{Role: agent.RoleTool, Content: "1", ToolCallID: "call_a", ToolName: "one"},
		// call_b was never answered: the turn was cancelled.
		{Role: agent.RoleUser, Content: "and now?"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "three"}}}, // recorded without an ID
		{Role: agent.RoleTool, Content: "3", ToolName: "three"},
		{Role: agent.RoleTool, Content: "stray", ToolCallID: "call_zzz", ToolName: "four"},
		{Role: agent.RoleUser, Content: "thanks"},
	}
	if _, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	modeltest.JSONEqual(t, "messages", modeltest.Field(t, srv.ChatBodies()[0], "messages"), `[
		{"role":"user","content":"two things"},
		{"role":"assistant","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"one","arguments":"{}"}},
			{"id":"call_b","type":"function","function":{"name":"two","arguments":"{}"}}]},
		{"role":"tool","content":"1","tool_call_id":"call_a"},
		{"role":"tool","content":"error: no result: the turn ended before this tool call was answered","tool_call_id":"call_b"},
		{"role":"user","content":"and now?"},
		{"role":"assistant","tool_calls":[{"id":"call_m4c0","type":"function","function":{"name":"three","arguments":"{}"}}]},
		{"role":"tool","content":"3","tool_call_id":"call_m4c0"},
		{"role":"user","content":"(result of four) stray"},
		{"role":"user","content":"thanks"}]`)
}

func TestChatStructuredOutput(t *testing.T) {
	tests := []struct {
		name       string
		schema     string
		wantStrict bool
	}{
		{
			name:       "closed schema goes strict",
			schema:     `{"type":"object","properties":{"city":{"type":"string"},"tags":{"type":"array","items":{"type":"object","properties":{"t":{"type":"string"}},"required":["t"],"additionalProperties":false}}},"required":["city","tags"],"additionalProperties":false}`,
			wantStrict: true,
		},
		{
			name:   "optional property",
			schema: `{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string"}},"required":["city"],"additionalProperties":false}`,
		},
		{
			name:   "open nested object",
			schema: `{"type":"object","properties":{"meta":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}},"required":["meta"],"additionalProperties":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{Content: `{"city":"Paris"}`}))
			got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
				Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "where?"}}, Format: json.RawMessage(tt.schema),
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Message.Content != `{"city":"Paris"}` {
				t.Errorf("content = %q", got.Message.Content)
			}
			body := srv.ChatBodies()[0]
			strict, _ := json.Marshal(tt.wantStrict)
			modeltest.JSONEqual(t, "response_format", modeltest.Field(t, body, "response_format"),
				`{"type":"json_schema","json_schema":{"name":"response","strict":`+string(strict)+`,"schema":`+tt.schema+`}}`)
			if !strings.Contains(string(body), `"schema":`+tt.schema) {
				t.Errorf("the schema was not sent as written: %s", body)
			}
		})
	}
}

func TestChatRefusal(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithReplies(openaitest.Reply{Refusal: "I can't help with that."}))
	_, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}, Format: json.RawMessage(`{"type":"object"}`),
	}, nil)
	if !errors.Is(err, openai.ErrRefusal) {
		t.Fatalf("err = %v, want ErrRefusal", err)
	}
	if msg := modeltest.UserMessage(t, err); msg != "model 'gpt-4o-mini' declined to answer: I can't help with that." {
		t.Errorf("message = %q", msg)
	}
}

func TestAuthorization(t *testing.T) {
	// The SDK's NewClient would read these; Deskhand must not.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	hi := agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}

	srv := openaitest.NewServer(t)
	if _, err := newModel(t, srv).Chat(context.Background(), hi, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newModel(t, srv, openai.WithAPIKey("sk-proj-abc123")).Chat(context.Background(), hi, nil); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if h, ok := calls[0].Header["Authorization"]; ok {
		t.Errorf("without a key, Authorization = %q", h)
	}
	if h := calls[1].Header.Get("Authorization"); h != "Bearer sk-proj-abc123" {
		t.Errorf("Authorization = %q", h)
	}
	for _, c := range calls {
		if c.Header.Get("OpenAI-Organization") != "" {
			t.Errorf("the organization of the environment was sent: %v", c.Header)
		}
	}
}

func TestListModels(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.WithModels("qwen3-8b", "gpt-oss-20b", "text-embedding-nomic"))
	got, err := newModel(t, srv).ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"qwen3-8b", "gpt-oss-20b", "text-embedding-nomic"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	none, err := newModel(t, openaitest.NewServer(t, openaitest.WithModels())).ListModels(context.Background())
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("no models: %v, %v", none, err)
	}
}

func TestNotReachable(t *testing.T) {
	tests := []struct {
		name string
		opts []openai.Option
		want string // {base} is the base URL
	}{
		{name: "compatible", want: "The OpenAI-compatible server at {base} is not reachable — is it running? Start it, or change the provider's base URL in Settings → Models"},
		{name: "named", opts: []openai.Option{openai.WithName("LM Studio")}, want: "LM Studio at {base} is not reachable — is it running? Start it, or change the provider's base URL in Settings → Models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := openai.New("http://"+modeltest.ClosedAddr(t)+"/v1", tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.want, "{base}", m.BaseURL())
			calls := map[string]func(context.Context) error{
				"Chat": func(ctx context.Context) error {
					_, err := m.Chat(ctx, agent.ChatRequest{Model: "x", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil)
					return err
				},
				"ListModels": func(ctx context.Context) error {
					_, err := m.ListModels(ctx)
					return err
				},
				"Ping": m.Ping,
				"DescribeModel": func(ctx context.Context) error {
					_, err := m.DescribeModel(ctx, "x")
					return err
				},
			}
			for name, call := range calls {
				err := call(context.Background())
				if !errors.Is(err, openai.ErrUnreachable) {
					t.Errorf("%s: err = %v, want ErrUnreachable", name, err)
					continue
				}
				if msg := modeltest.UserMessage(t, err); msg != want {
					t.Errorf("%s: message = %q\nwant %q", name, msg, want)
				}
			}
		})
	}
}

func TestOpenAIWithoutKeySendsNothing(t *testing.T) {
	srv := openaitest.NewServer(t)
	m := newModel(t, srv, openai.WithKind(openai.KindOpenAI))
	_, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, openai.ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if msg := modeltest.UserMessage(t, err); !strings.Contains(msg, "needs an API key") {
		t.Errorf("message = %q", msg)
	}
	if _, err := m.ListModels(context.Background()); !errors.Is(err, openai.ErrUnauthorized) {
		t.Errorf("ListModels: %v", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the fake got %d requests", n)
	}
}

func TestDescribeModel(t *testing.T) {
	t.Run("OpenAI", func(t *testing.T) {
		srv := openaitest.NewServer(t, openaitest.WithAPIKey("sk-test"),
			openaitest.WithModels("gpt-4o", "gpt-4.1-mini-2025-04-14", "gpt-5", "gpt-4o-2024-05-13", "o1-pro", "gpt-4o-audio-preview"))
		m := newModel(t, srv, openai.WithKind(openai.KindOpenAI), openai.WithAPIKey("sk-test"))
		tests := []struct {
			name string
			want agent.ModelInfo
		}{
			{"gpt-4o", agent.ModelInfo{Name: "gpt-4o", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 128000}},
			{"gpt-4.1-mini-2025-04-14", agent.ModelInfo{Name: "gpt-4.1-mini-2025-04-14", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 1047576}},
			{"gpt-5", agent.ModelInfo{Name: "gpt-5", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 400000}},
			{"gpt-4o-2024-05-13", agent.ModelInfo{Name: "gpt-4o-2024-05-13"}},
			{"o1-pro", agent.ModelInfo{Name: "o1-pro"}},
			{"gpt-4o-audio-preview", agent.ModelInfo{Name: "gpt-4o-audio-preview"}},
		}
		for _, tt := range tests {
			got, err := m.DescribeModel(context.Background(), tt.name)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.name, diff)
			}
		}
		_, err := m.DescribeModel(context.Background(), "gpt-9")
		if !errors.Is(err, openai.ErrModelNotFound) {
			t.Fatalf("gpt-9: %v, want ErrModelNotFound", err)
		}
		if msg := modeltest.UserMessage(t, err); !strings.HasPrefix(msg, "model 'gpt-9' is not available at OpenAI at "+m.BaseURL()+"; it has: gpt-4o, ") {
			t.Errorf("message = %q", msg)
		}
	})
	t.Run("LM Studio", func(t *testing.T) {
		srv := openaitest.NewServer(t, openaitest.WithLMStudio(
			openaitest.LMStudioModel{ID: "qwen3-8b", MaxContextLength: 40960, LoadedContextLength: 4096, ToolUse: true},
			openaitest.LMStudioModel{ID: "gemma-3-270m-it", MaxContextLength: 32768},
		))
		m := newModel(t, srv, openai.WithName("LM Studio"))
		for _, want := range []agent.ModelInfo{
			{Name: "qwen3-8b", Tools: agent.CapabilityYes, ContextLength: 4096},
			{Name: "gemma-3-270m-it", ContextLength: 32768},
		} {
			got, err := m.DescribeModel(context.Background(), want.Name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}
		_, err := m.DescribeModel(context.Background(), "llama-9")
		if !errors.Is(err, openai.ErrModelNotFound) {
			t.Fatalf("llama-9: %v", err)
		}
		if msg, want := modeltest.UserMessage(t, err), "model 'llama-9' is not available at LM Studio at "+m.BaseURL()+"; it has: qwen3-8b, gemma-3-270m-it — pick one in the agent's settings"; msg != want {
			t.Errorf("message = %q\nwant %q", msg, want)
		}
	})
	t.Run("other compatible server", func(t *testing.T) {
		srv := openaitest.NewServer(t, openaitest.WithAnyModel())
		got, err := newModel(t, srv).DescribeModel(context.Background(), "whatever.gguf")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(agent.ModelInfo{Name: "whatever.gguf"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestNoSecretInErrors(t *testing.T) {
	const key = "sk-proj-TOPSECRETkey1234"
	srv := openaitest.NewServer(t, openaitest.WithAPIKey("sk-the-right-one"),
		openaitest.WithReplies(openaitest.Reply{Status: http.StatusBadRequest, Error: openaitest.APIError{Message: "bad request made with " + key}}))
	m := newModel(t, srv, openai.WithAPIKey(key))
	_, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil)
	if err == nil {
		t.Fatal("a wrong key was accepted")
	}
	for _, s := range []string{err.Error(), modeltest.UserMessage(t, err)} {
		if strings.Contains(s, "TOPSECRET") || strings.Contains(s, "1234") {
			t.Errorf("the key shows in %q", s)
		}
	}
}
