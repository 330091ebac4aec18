package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/server/agent"
)

const (
	model = anthropictest.DefaultModel
	key   = "sk-ant-test-0123"
)

// newModel points a Model at the fake, through the fake's own client so
// its connections close with it. Retries are off unless opts turn them on.
func newModel(t *testing.T, srv *anthropictest.Server, opts ...anthropic.Option) *anthropic.Model {
	t.Helper()
	all := append([]anthropic.Option{anthropic.WithHTTPClient(srv.Client()), anthropic.WithMaxRetries(0)}, opts...)
	m, err := anthropic.New(srv.URL, key, all...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wireField returns one top-level field of the n-th messages body.
func wireField(t *testing.T, srv *anthropictest.Server, n int, field string) json.RawMessage {
	t.Helper()
	calls := srv.MessageCalls()
	if len(calls) <= n {
		t.Fatalf("the fake got %d message requests, want more than %d", len(calls), n)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(calls[n].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body[field]
}

func hi(text string) []agent.Message {
	return []agent.Message{{Role: agent.RoleUser, Content: text}}
}

func TestParseBaseURL(t *testing.T) {
	modeltest.CheckBaseURLs(t, []modeltest.BaseURL{
		{In: "", Want: "https://api.anthropic.com"},
		{In: "  ", Want: "https://api.anthropic.com"},
		{In: "api.anthropic.com", Want: "https://api.anthropic.com"},
		{In: "https://api.anthropic.com/", Want: "https://api.anthropic.com"},
		{In: "HTTPS://gateway.example/anthropic/", Want: "https://gateway.example/anthropic"},
		{In: "http://127.0.0.1:8080", Want: "http://127.0.0.1:8080"},
		{In: "http://[::1]:8080/v", Want: "http://[::1]:8080/v"},
		{In: "ftp://api.anthropic.com", WantErr: true},
		{In: "https://", WantErr: true},
		{In: "https://host:0", WantErr: true},
		{In: "https://host:99999", WantErr: true},
		{In: "https://host/?beta=1", WantErr: true},
		{In: "https://user:pw@host", WantErr: true},
	}, anthropic.ParseBaseURL, func(in string) (string, error) {
		m, err := anthropic.New(in, key)
		if err != nil {
			return "", err
		}
		return m.BaseURL(), nil
	})
}

func TestNewNeedsAKey(t *testing.T) {
	for _, k := range []string{"", "  "} {
		_, err := anthropic.New("", k)
		if msg := modeltest.UserMessage(t, err); msg != "an Anthropic API key is required — set it in Settings" {
			t.Errorf("message = %q", msg)
		}
		if !errors.Is(err, anthropic.ErrNoAPIKey) {
			t.Errorf("errors.Is(%v, ErrNoAPIKey) = false", err)
		}
	}
}

func TestChatStreamsReply(t *testing.T) {
	modeltest.Chats(t, model, func(t *testing.T, opts []anthropictest.Option) (modeltest.Model, func(*testing.T, error)) {
		srv := anthropictest.NewServer(t, opts...)
		return newModel(t, srv), func(t *testing.T, _ error) {
			calls := srv.MessageCalls()
			if len(calls) != 1 {
				t.Fatalf("the fake got %d message requests, want 1", len(calls))
			}
			h := calls[0].Header
			if got := h.Get("X-Api-Key"); got != key {
				t.Errorf("x-api-key = %q, want %q", got, key)
			}
			if got := h.Get("Authorization"); got != "" {
				t.Errorf("Authorization = %q, want none (the key goes as x-api-key)", got)
			}
			if got := h.Get("Anthropic-Version"); got != anthropictest.APIVersion {
				t.Errorf("anthropic-version = %q, want %q", got, anthropictest.APIVersion)
			}
			modeltest.JSONEqual(t, "body", calls[0].Body, `{
				"model": "claude-sonnet-4-5-20250929",
				"max_tokens": 8192,
				"stream": true,
				"system": [{"type":"text","text":"Be brief."}],
				"messages": [
					{"role":"user","content":[{"type":"text","text":"My name is Ada."}]},
					{"role":"assistant","content":[{"type":"text","text":"Hello Ada."}]},
					{"role":"user","content":[{"type":"text","text":"What is my name?"}]}]}`)
		}
	}, []modeltest.ChatCase[[]anthropictest.Option]{
		modeltest.EchoCase[[]anthropictest.Option](model, 11, "end_turn"), // output: deltas
		{
			Name: "thinking, and cache tokens counted in the prompt",
			Setup: []anthropictest.Option{anthropictest.WithReplies(anthropictest.Reply{
				Thinking: "Easy one.", Text: "Ada.", Model: "claude-sonnet-4-5-20250929",
				InputTokens: 10, CacheCreationInputTokens: 100, CacheReadInputTokens: 1000, OutputTokens: 7,
			})},
			Deltas: []agent.Delta{{Thinking: "Easy "}, {Thinking: "one."}, {Content: "Ada."}},
			Want: agent.ChatResponse{
				Message:      agent.Message{Role: agent.RoleAssistant, Content: "Ada."},
				Model:        model,
				PromptTokens: 1110,
				OutputTokens: 7,
				DoneReason:   "end_turn",
			},
		},
		{
			Name:   "a text reply cut at max_tokens is kept",
			Setup:  []anthropictest.Option{anthropictest.WithReplies(anthropictest.Reply{Text: "Ada is", StopReason: "max_tokens"})},
			Deltas: []agent.Delta{{Content: "Ada "}, {Content: "is"}},
			Want: agent.ChatResponse{
				Message:      agent.Message{Role: agent.RoleAssistant, Content: "Ada is"},
				Model:        model,
				PromptTokens: 12,
				OutputTokens: 2,
				DoneReason:   "max_tokens",
			},
		},
	})
}

func TestChatNilOnDelta(t *testing.T) {
	srv := anthropictest.NewServer(t)
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "I remember: hi" {
		t.Errorf("content = %q", got.Message.Content)
	}
}

func TestMaxTokens(t *testing.T) {
	srv := anthropictest.NewServer(t)
	m := newModel(t, srv, anthropic.WithMaxTokens(1000))
	if _, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := string(wireField(t, srv, 0, "max_tokens")); got != "1000" {
		t.Errorf("max_tokens = %s, want 1000", got)
	}
	// Over what the model allows, the API refuses the request.
	m = newModel(t, srv, anthropic.WithMaxTokens(100000))
	_, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil)
	if msg := modeltest.UserMessage(t, err); msg != "Anthropic refused the request: max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "+model {
		t.Errorf("message = %q", msg)
	}
}

func TestChatToolUseAcrossRounds(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(
		anthropictest.Reply{Text: "Let me look.", ToolUses: []anthropictest.ToolUse{
			{ID: "toolu_01A", Name: "read_file", Input: `{"path":"/home/u/a.txt","max_bytes":100}`},
			{ID: "toolu_01B", Name: "now", Input: `{}`},
		}},
		anthropictest.Reply{Text: "The file says hello; it is noon."},
	))
	tools := []agent.ToolSpec{
		{
			Name:        "read_file",
			Description: "Read a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path"},
				"max_bytes":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`),
		},
		{Name: "now", Description: "Current time"}, // no schema at all
	}
	modeltest.ToolRoundTrip(t, newModel(t, srv), modeltest.RoundTrip{
		Req: agent.ChatRequest{Model: model, Tools: tools,
			Messages: []agent.Message{{Role: agent.RoleSystem, Content: "You read files."}, {Role: agent.RoleUser, Content: "read /home/u/a.txt"}}},
		First: agent.ChatResponse{
			Message: agent.Message{Role: agent.RoleAssistant, Content: "Let me look.", ToolCalls: []agent.ToolCall{
				{ID: "toolu_01A", Name: "read_file", Arguments: json.RawMessage(`{"path":"/home/u/a.txt","max_bytes":100}`)},
				{ID: "toolu_01B", Name: "now", Arguments: json.RawMessage(`{}`)},
			}},
			Model:        model,
			PromptTokens: 5,
			OutputTokens: 2 + 1 + 7 + 1 + 1, // words, then the input_json_delta pieces (the first one empty)
			DoneReason:   "tool_use",
		},
		FirstDeltas: []agent.Delta{{Content: "Let "}, {Content: "me "}, {Content: "look."}},
		Results: []agent.Message{
			{Role: agent.RoleTool, Content: "hello", ToolCallID: "toolu_01A", ToolName: "read_file"},
			{Role: agent.RoleTool, Content: "12:00", ToolCallID: "toolu_01B", ToolName: "now"},
		},
		Final: "The file says hello; it is noon.",
		Sent:  func() [][]byte { return srv.Bodies(http.MethodPost, "/v1/messages") },
		Wire: map[string]string{
			"system": `[{"type":"text","text":"You read files."}]`,
			"messages": `[
				{"role":"user","content":[{"type":"text","text":"read /home/u/a.txt"}]},
				{"role":"assistant","content":[
					{"type":"text","text":"Let me look."},
					{"type":"tool_use","id":"toolu_01A","name":"read_file","input":{"path":"/home/u/a.txt","max_bytes":100}},
					{"type":"tool_use","id":"toolu_01B","name":"now","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_01A","content":[{"type":"text","text":"hello"}]},
					{"type":"tool_result","tool_use_id":"toolu_01B","content":[{"type":"text","text":"12:00"}]}]}]`,
			"tools": `[
				{"name":"read_file","description":"Read a file","input_schema":{"type":"object","required":["path"],"additionalProperties":false,
					"properties":{"path":{"type":"string","description":"file path"},"max_bytes":{"type":"integer","minimum":1}}}},
				{"name":"now","description":"Current time","input_schema":{"type":"object","properties":{}}}]`,
		},
		// Tool arguments and properties keep their order on the wire.
		InOrder: []string{`"input":{"path":"/home/u/a.txt","max_bytes":100}`, `"properties":{"path":{"type":"string","description":"file path"},"max_bytes":`},
	})
}

// TestChatTranscriptEdges: transcripts the API would refuse as they are
// (as the fake checks) are mended: a call left unanswered gets an error
// result, IDs of another shape or none are replaced, a result that answers
// no call goes as text, empty messages are left out.
func TestChatTranscriptEdges(t *testing.T) {
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "One."},
		{Role: agent.RoleUser, Content: "start"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "call.1/x", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
			{Name: "now"},
		}},
		{Role: agent.RoleTool, Content: "A", ToolCallID: "call.1/x", ToolName: "read_file"},
		// the turn ended before now answered
		{Role: agent.RoleUser, Content: "   "},
		{Role: agent.RoleAssistant, Content: "", ToolCalls: []agent.ToolCall{{ID: "dup", Name: "now"}, {ID: "dup", Name: "now"}}},
		{Role: agent.RoleTool, Content: "", ToolName: "now"},
		{Role: agent.RoleTool, Content: "11:00", ToolName: "now"},
		{Role: agent.RoleTool, Content: "stray", ToolName: "ghost"},
		{Role: agent.RoleSystem, Content: "Two."},
		{Role: agent.RoleAssistant, Content: ""},
		{Role: agent.RoleUser, Content: "go on"},
	}
	srv := anthropictest.NewServer(t)
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: msgs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "I remember: start | [result of ghost]\nstray | go on" {
		t.Errorf("content = %q", got.Message.Content)
	}
	modeltest.JSONEqual(t, "system", wireField(t, srv, 0, "system"), `[{"type":"text","text":"One."},{"type":"text","text":"Two."}]`)
	modeltest.JSONEqual(t, "messages", wireField(t, srv, 0, "messages"), `[
		{"role":"user","content":[{"type":"text","text":"start"}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"toolu_deskhand_1","name":"read_file","input":{"path":"a"}},
			{"type":"tool_use","id":"toolu_deskhand_2","name":"now","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_deskhand_1","content":[{"type":"text","text":"A"}]},
			{"type":"tool_result","tool_use_id":"toolu_deskhand_2","is_error":true,
				"content":[{"type":"text","text":"error: no result: the turn ended before this tool call was answered"}]}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"dup","name":"now","input":{}},
			{"type":"tool_use","id":"toolu_deskhand_3","name":"now","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"dup"},
			{"type":"tool_result","tool_use_id":"toolu_deskhand_3","content":[{"type":"text","text":"11:00"}]},
			{"type":"text","text":"[result of ghost]\nstray"}]},
		{"role":"user","content":[{"type":"text","text":"go on"}]}]`)
}

func TestChatStructuredOutput(t *testing.T) {
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0},
			"tags":{"type":"array","items":{"type":"string"},"minItems":2},"address":{"type":"object","properties":{"city":{"type":"string"}}}},
		"required":["name"]}`
	srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.Reply{Text: `{"name":"Ada","age":36}`}))
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model:    model,
		Messages: hi("Who wrote the first program?"),
		Tools:    []agent.ToolSpec{{Name: "now", Description: "Current time"}},
		Format:   json.RawMessage(schema),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != `{"name":"Ada","age":36}` {
		t.Errorf("content = %q", got.Message.Content)
	}
	modeltest.JSONEqual(t, "output_config", wireField(t, srv, 0, "output_config"), `{"format":{"type":"json_schema","schema":{
		"type":"object",
		"properties":{
			"name":{"type":"string","description":"{minLength: 1}"},
			"age":{"type":"integer","description":"{minimum: 0}"},
			"tags":{"type":"array","items":{"type":"string"},"description":"{minItems: 2}"},
			"address":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}},
		"required":["name"],
		"additionalProperties":false}}}`)
	if tc := wireField(t, srv, 0, "tool_choice"); tc != nil {
		t.Errorf("tool_choice = %s, want none (structured output is not a forced tool)", tc)
	}
	if !strings.Contains(string(srv.MessageCalls()[0].Body), `"properties":{"name":`) {
		t.Errorf("the schema's properties lost their order: %s", srv.MessageCalls()[0].Body)
	}
}

// TestChatErrors: the failures only Anthropic has (those every adapter
// has are the conformance suite's).
func TestChatErrors(t *testing.T) {
	modeltest.ChatErrors(t, model, func(t *testing.T, fake []anthropictest.Option) (modeltest.Model, func(*testing.T, error)) {
		return newModel(t, anthropictest.NewServer(t, fake...)), nil
	}, []modeltest.ErrorCase[[]anthropictest.Option]{
		{
			Name:  "overloaded",
			Setup: []anthropictest.Option{anthropictest.WithReplies(anthropictest.Overloaded)},
			Want:  modeltest.Want{Says: "Anthropic is overloaded right now; try again in a few minutes", Check: sdkError(sdk.ErrorTypeOverloadedError)},
		},
		{
			Name:  "prompt too long, scripted",
			Setup: []anthropictest.Option{anthropictest.WithReplies(anthropictest.PromptTooLong(210345, 200000))},
			Want: modeltest.Want{
				Says: "the conversation is too long for 'claude-sonnet-4-5-20250929' (210345 tokens, at most 200000): start a new conversation, or choose a model with a larger context window",
				Is:   anthropic.ErrPromptTooLong, Check: sdkError(sdk.ErrorTypeInvalidRequestError),
			},
		},
		{
			Name:  "prompt too long for the model's window",
			Setup: []anthropictest.Option{anthropictest.WithModels(anthropictest.ModelInfo{ID: "claude-tiny", MaxInputTokens: 3})},
			Req:   agent.ChatRequest{Model: "claude-tiny", Messages: hi("one two three four")},
			Want: modeltest.Want{
				Says: "the conversation is too long for 'claude-tiny' (4 tokens, at most 3): start a new conversation, or choose a model with a larger context window",
				Is:   anthropic.ErrPromptTooLong,
			},
		},
		{
			Name:  "refusal",
			Setup: []anthropictest.Option{anthropictest.WithReplies(anthropictest.Reply{Text: "I can't", StopReason: "refusal"})},
			Want:  modeltest.Want{Says: "Claude declined to answer this request; rephrase it or start a new conversation", Is: anthropic.ErrRefused},
		},
		{
			Name: "tool call cut at max_tokens",
			Setup: []anthropictest.Option{anthropictest.WithReplies(anthropictest.Reply{StopReason: "max_tokens",
				ToolUses: []anthropictest.ToolUse{{Name: "now", Input: `{"tz":"UT`}}})},
			Want: modeltest.Want{
				Says: "Claude's answer reached its max_tokens in the middle of a tool call; raise the maximum of output tokens, or start a new conversation",
				Is:   anthropic.ErrTruncated,
			},
		},
		{
			Name: "no model",
			Req:  agent.ChatRequest{Model: " "},
			Want: modeltest.Want{Says: "no Anthropic model is chosen — choose one in the agent's settings"},
		},
	})
}

// sdkError is a [modeltest.Want] check: the error carries the SDK's
// *anthropic.Error of type typ.
func sdkError(typ sdk.ErrorType) func(*testing.T, error) {
	return modeltest.As(func(e *sdk.Error) bool { return e.Type() == typ })
}

// TestRetries: the SDK retries overload and short rate limits; a
// retry-after beyond MaxRetryWait is not waited out.
func TestRetries(t *testing.T) {
	t.Run("overloaded, then an answer", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.Overloaded, anthropictest.Reply{Text: "Fine."}))
		got, err := newModel(t, srv, anthropic.WithMaxRetries(1)).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Message.Content != "Fine." || len(srv.MessageCalls()) != 2 {
			t.Errorf("content %q after %d requests", got.Message.Content, len(srv.MessageCalls()))
		}
	})
	t.Run("rate limited for a second, then an answer", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.RateLimited(1), anthropictest.Reply{Text: "Fine."}))
		start := time.Now()
		got, err := newModel(t, srv, anthropic.WithMaxRetries(2)).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Message.Content != "Fine." || time.Since(start) < time.Second {
			t.Errorf("content %q after %s", got.Message.Content, time.Since(start))
		}
	})
	t.Run("rate limited for a minute: no wait", func(t *testing.T) {
		srv := anthropictest.NewServer(t, anthropictest.WithReplies(anthropictest.RateLimited(60)))
		start := time.Now()
		_, err := newModel(t, srv, anthropic.WithMaxRetries(2)).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil)
		if msg := modeltest.UserMessage(t, err); !strings.HasPrefix(msg, "Anthropic's rate limit for this API key was reached; try again in 60 seconds") {
			t.Errorf("message = %q", msg)
		}
		if n := len(srv.MessageCalls()); n != 1 || time.Since(start) > 5*time.Second {
			t.Errorf("%d requests in %s, want 1 at once", n, time.Since(start))
		}
	})
}

func TestListModels(t *testing.T) {
	many := make([]anthropictest.ModelInfo, 1005)
	var manyIDs []string
	for i := range many {
		many[i].ID = fmt.Sprintf("claude-test-%04d", i)
		manyIDs = append(manyIDs, many[i].ID)
	}
	tests := []struct {
		name      string
		opts      []anthropictest.Option
		want      []string
		wantPages int
	}{
		{name: "default", want: []string{"claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"}, wantPages: 1},
		{name: "none", opts: []anthropictest.Option{anthropictest.WithModels()}, want: []string{}, wantPages: 1},
		{name: "two pages", opts: []anthropictest.Option{anthropictest.WithModels(many...)}, want: manyIDs, wantPages: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, tt.opts...)
			got, err := newModel(t, srv).ListModels(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			calls := srv.Calls()
			if len(calls) != tt.wantPages {
				t.Fatalf("%d requests, want %d", len(calls), tt.wantPages)
			}
			for _, c := range calls {
				if c.Method != http.MethodGet || c.Path != "/v1/models" || c.Header.Get("X-Api-Key") != key {
					t.Errorf("request %s %s?%s with key %q", c.Method, c.Path, c.Query, c.Header.Get("X-Api-Key"))
				}
			}
		})
	}
}

func TestDescribeModel(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.WithModels(
		anthropictest.ModelInfo{ID: model, MaxInputTokens: 1000000},
		anthropictest.ModelInfo{ID: "claude-old", NoStructuredOutputs: true},
		anthropictest.ModelInfo{ID: "llama-via-gateway", MaxInputTokens: 8192},
	))
	m := newModel(t, srv)
	for _, tt := range []struct {
		name string
		want agent.ModelInfo
	}{
		{model, agent.ModelInfo{Name: model, Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityYes, ContextLength: 1000000}},
		{"claude-old", agent.ModelInfo{Name: "claude-old", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityNo, ContextLength: 200000}},
		{"llama-via-gateway", agent.ModelInfo{Name: "llama-via-gateway", StructuredOutput: agent.CapabilityYes, ContextLength: 8192}},
	} {
		got, err := m.DescribeModel(context.Background(), tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	_, err := m.DescribeModel(context.Background(), "claude-nope")
	if msg := modeltest.UserMessage(t, err); !strings.HasPrefix(msg, "Anthropic has no model 'claude-nope'") {
		t.Errorf("unknown model: %q", msg)
	}
}

func TestNotReachable(t *testing.T) {
	m, err := anthropic.New("http://"+modeltest.ClosedAddr(t), key, anthropic.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	want := "could not reach Anthropic at " + m.BaseURL() + " — check the network connection or the base URL in Settings"
	calls := map[string]func(context.Context) error{
		"ListModels": func(ctx context.Context) error {
			_, err := m.ListModels(ctx)
			return err
		},
		"DescribeModel": func(ctx context.Context) error {
			_, err := m.DescribeModel(ctx, model)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if msg := modeltest.UserMessage(t, call(context.Background())); msg != want {
				t.Errorf("message = %q, want %q", msg, want)
			}
		})
	}
}

// TestEnvironmentIgnored: the SDK's environment defaults (key, base URL,
// custom headers) do not leak into a Model.
func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://"+modeltest.ClosedAddr(t))
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	srv := anthropictest.NewServer(t)
	if _, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{Model: model, Messages: hi("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	h := srv.MessageCalls()[0].Header
	if h.Get("X-Api-Key") != key || h.Get("Authorization") != "" || h.Get("X-Leak") != "" {
		t.Errorf("headers = %v", h)
	}
}

// TestChatStreamEndsEarly: a stream that ends cleanly but without
// message_stop is no answer.
func TestChatStreamEndsEarly(t *testing.T) {
	events := []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, e := range events {
			fmt.Fprint(w, e+"\n\n")
		}
	}))
	defer srv.Close()
	m, err := anthropic.New(srv.URL, key, anthropic.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	var text string
	got, err := m.Chat(context.Background(), agent.ChatRequest{Model: "m", Messages: hi("hi")}, func(d agent.Delta) { text += d.Content })
	if !errors.Is(err, anthropic.ErrStreamCut) {
		t.Fatalf("Chat = %+v, %v; want ErrStreamCut", got, err)
	}
	if msg := modeltest.UserMessage(t, err); !strings.HasPrefix(msg, "Anthropic's answer broke off before its end") {
		t.Errorf("message = %q", msg)
	}
	if text != "Hel" {
		t.Errorf("deltas = %q", text)
	}
}
