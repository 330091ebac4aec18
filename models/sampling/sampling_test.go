package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// fakeSampler records the params it is sent and answers with result or err.
type fakeSampler struct {
	tools  bool
	result *mcp.CreateMessageResult
	err    error
	got    []mcp.CreateMessageParams
}

func (f *fakeSampler) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	f.got = append(f.got, p)
	if f.err != nil {
		return nil, f.err
	}
	return f.result, nil
}

func (f *fakeSampler) SupportsTools() bool { return f.tools }

func textResult(model, text string) *mcp.CreateMessageResult {
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent(text)},
		Model:           model,
		StopReason:      "endTurn",
	}
}

// chat runs Model{maxTokens}.Chat with s in the context and collects the
// deltas.
func chat(t *testing.T, maxTokens int, s Sampler, req agent.ChatRequest) (agent.ChatResponse, []agent.Delta, error) {
	t.Helper()
	ctx := agent.WithClientModel(t.Context(), s)
	var deltas []agent.Delta
	resp, err := Model{MaxTokens: maxTokens}.Chat(ctx, req, func(d agent.Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

// wire is v as the client receives it: JSON decoded into generic values.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad test JSON: %v\n%s", err, s)
	}
	return out
}

// userError asserts err is a *agent.UserError whose message contains want.
func userError(t *testing.T, err error, want string) *agent.UserError {
	t.Helper()
	var ue *agent.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want *agent.UserError", err, err)
	}
	if !strings.Contains(ue.Msg, want) {
		t.Fatalf("message = %q, want it to contain %q", ue.Msg, want)
	}
	return ue
}

func TestChatText(t *testing.T) {
	history := []agent.Message{
		{Role: agent.RoleSystem, Content: "You are terse."},
		{Role: agent.RoleSystem, Content: "Answer in French."},
		{Role: agent.RoleUser, Content: "hello"},
		{Role: agent.RoleAssistant, Content: "bonjour"},
		{Role: agent.RoleAssistant, Content: " "}, // nothing said: not sent
		{Role: agent.RoleUser, Content: "how are you?"},
	}
	wantMessages := []mcp.SamplingMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("hello")},
		{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("bonjour")},
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("how are you?")},
	}
	tests := []struct {
		name          string
		maxTokens     int
		wantMaxTokens int
	}{
		{"default max tokens", 0, DefaultMaxTokens},
		{"negative is the default", -1, DefaultMaxTokens},
		{"configured max tokens", 256, 256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSampler{tools: true, result: textResult("claude-x", "bien")}
			resp, deltas, err := chat(t, tt.maxTokens, s, agent.ChatRequest{Model: "llama3.2", Messages: history})
			if err != nil {
				t.Fatal(err)
			}
			want := []mcp.CreateMessageParams{{
				Messages:     wantMessages,
				SystemPrompt: "You are terse.\n\nAnswer in French.",
				MaxTokens:    tt.wantMaxTokens,
			}}
			if diff := cmp.Diff(want, s.got); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
			wantResp := agent.ChatResponse{
				Message:    agent.Message{Role: agent.RoleAssistant, Content: "bien"},
				Model:      "claude-x",
				DoneReason: "endTurn",
			}
			if diff := cmp.Diff(wantResp, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]agent.Delta{{Content: "bien"}}, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatTools(t *testing.T) {
	req := agent.ChatRequest{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "sys"},
			{Role: agent.RoleUser, Content: "weather in Paris and Rome?"},
			{Role: agent.RoleAssistant, Content: "Looking.", ToolCalls: []agent.ToolCall{
				{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{Name: "lookup", Arguments: json.RawMessage(`{"city":"Rome"}`)}, // no ID (older transcripts)
			}},
			{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "lookup", Content: "sunny"},
			{Role: agent.RoleTool, ToolName: "lookup", Content: "rain"},
		},
		Tools: []agent.ToolSpec{
			{Name: "ask_user", Description: "Ask the person.", Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`)},
			{Name: "lookup", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			{Name: "noargs"},
		},
	}
	s := &fakeSampler{tools: true, result: &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: []mcp.Content{
			mcp.NewToolUseContent("u1", "ask_user", map[string]any{"question": "Celsius?"}),
			mcp.NewToolUseContent("u2", "noargs", nil),
		}},
		Model:      "claude-x",
		StopReason: "toolUse",
	}}
	resp, deltas, err := chat(t, 0, s, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 1 {
		t.Fatalf("CreateMessage called %d times, want 1", len(s.got))
	}
	wantParams := decode(t, `{
		"systemPrompt": "sys",
		"maxTokens": 4096,
		"messages": [
			{"role": "user", "content": {"type": "text", "text": "weather in Paris and Rome?"}},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Looking."},
				{"type": "tool_use", "id": "c1", "name": "lookup", "input": {"city": "Paris"}},
				{"type": "tool_use", "id": "deskhand_call_1", "name": "lookup", "input": {"city": "Rome"}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "sunny"}]},
				{"type": "tool_result", "toolUseId": "deskhand_call_1", "content": [{"type": "text", "text": "rain"}]}
			]}
		],
		"tools": [
			{"name": "ask_user", "description": "Ask the person.", "annotations": {},
			 "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}},
			{"name": "lookup", "description": "Weather.", "annotations": {},
			 "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
			{"name": "noargs", "annotations": {}, "inputSchema": {"type": "object"}}
		],
		"toolChoice": {"mode": "auto"}
	}`)
	if diff := cmp.Diff(wantParams, wire(t, s.got[0])); diff != "" {
		t.Errorf("params on the wire (-want +got):\n%s", diff)
	}
	wantResp := agent.ChatResponse{
		Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "u1", Name: "ask_user", Arguments: json.RawMessage(`{"question":"Celsius?"}`)},
			{ID: "u2", Name: "noargs", Arguments: json.RawMessage(`{}`)},
		}},
		Model:      "claude-x",
		DoneReason: "toolUse",
	}
	if diff := cmp.Diff(wantResp, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if len(deltas) != 0 {
		t.Errorf("deltas = %v, want none for a reply without text", deltas)
	}
}

// A tool call a past turn left unanswered still gets its tool_result (an
// error) in the next message, as the spec requires of every tool_use.
func TestChatUnansweredToolCall(t *testing.T) {
	req := agent.ChatRequest{Messages: []agent.Message{
		{Role: agent.RoleUser, Content: "q"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
			{ID: "a", Name: "ask_user", Arguments: json.RawMessage(`{"question":"x?"}`)},
			{ID: "b", Name: "lookup"},
		}},
		{Role: agent.RoleTool, ToolCallID: "b", ToolName: "lookup", Content: ""},
		{Role: agent.RoleUser, Content: "again"},
	}}
	s := &fakeSampler{tools: true, result: textResult("m", "ok")}
	if _, _, err := chat(t, 0, s, req); err != nil {
		t.Fatal(err)
	}
	want := decode(t, `[
		{"role": "user", "content": {"type": "text", "text": "q"}},
		{"role": "assistant", "content": [
			{"type": "tool_use", "id": "a", "name": "ask_user", "input": {"question": "x?"}},
			{"type": "tool_use", "id": "b", "name": "lookup", "input": {}}
		]},
		{"role": "user", "content": [
			{"type": "tool_result", "toolUseId": "a", "isError": true,
			 "content": [{"type": "text", "text": "error: no result: the turn ended before this tool call was answered"}]},
			{"type": "tool_result", "toolUseId": "b", "content": []}
		]},
		{"role": "user", "content": {"type": "text", "text": "again"}}
	]`)
	if diff := cmp.Diff(want, wire(t, s.got[0].Messages)); diff != "" {
		t.Errorf("messages on the wire (-want +got):\n%s", diff)
	}
}

// Modern requests decode the reply's content as generic JSON; legacy ones
// as typed content. Both read the same.
func TestChatResultContent(t *testing.T) {
	tests := []struct {
		name    string
		content any
		want    agent.Message
	}{
		{
			name:    "typed text",
			content: mcp.NewTextContent("hi"),
			want:    agent.Message{Role: agent.RoleAssistant, Content: "hi"},
		},
		{
			name:    "pointer to text",
			content: &mcp.TextContent{Type: "text", Text: "hi"},
			want:    agent.Message{Role: agent.RoleAssistant, Content: "hi"},
		},
		{
			name:    "modern single block",
			content: map[string]any{"type": "text", "text": "hi"},
			want:    agent.Message{Role: agent.RoleAssistant, Content: "hi"},
		},
		{
			name: "modern array of text and tool_use",
			content: []any{
				map[string]any{"type": "text", "text": "Let me "},
				map[string]any{"type": "text", "text": "check."},
				map[string]any{"type": "tool_use", "id": "t1", "name": "lookup", "input": map[string]any{"city": "Oslo", "days": float64(2)}},
			},
			want: agent.Message{Role: agent.RoleAssistant, Content: "Let me check.", ToolCalls: []agent.ToolCall{
				{ID: "t1", Name: "lookup", Arguments: json.RawMessage(`{"city":"Oslo","days":2}`)},
			}},
		},
		{
			name:    "modern tool_use without input",
			content: map[string]any{"type": "tool_use", "id": "t1", "name": "lookup"},
			want: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "t1", Name: "lookup", Arguments: json.RawMessage(`{}`)},
			}},
		},
		{
			name: "typed array with an image",
			content: []mcp.Content{
				mcp.NewImageContent("aGk=", "image/png"),
				mcp.NewTextContent("a picture"),
			},
			want: agent.Message{Role: agent.RoleAssistant, Content: "a picture"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSampler{tools: true, result: &mcp.CreateMessageResult{
				SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: tt.content},
				Model:           "m",
			}}
			resp, deltas, err := chat(t, 0, s, agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "q"}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			var wantDeltas []agent.Delta
			if tt.want.Content != "" {
				wantDeltas = []agent.Delta{{Content: tt.want.Content}}
			}
			if diff := cmp.Diff(wantDeltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatRefusals(t *testing.T) {
	user := []agent.Message{{Role: agent.RoleUser, Content: "q"}}
	askUser := agent.ToolSpec{Name: "ask_user", Parameters: json.RawMessage(`{"type":"object"}`)}
	tests := []struct {
		name  string
		tools bool
		req   agent.ChatRequest
		want  string
	}{
		{
			name:  "response schema",
			tools: true,
			req:   agent.ChatRequest{Messages: user, Format: json.RawMessage(`{"type":"object"}`)},
			want:  "the client's model cannot be asked for structured output; run this agent on Ollama",
		},
		{
			name:  "tools the client cannot use",
			tools: false,
			req: agent.ChatRequest{Messages: user, Tools: []agent.ToolSpec{
				askUser, {Name: "read_file"}, {Name: "write_file"},
			}},
			want: "the client's model cannot use tools (it did not declare tools in sampling), and this agent needs them: read_file, write_file",
		},
		{
			name:  "tool schema that is not an object",
			tools: true,
			req:   agent.ChatRequest{Messages: user, Tools: []agent.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`[1]`)}}},
			want:  `the parameters of the tool "bad" are not a JSON Schema object`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSampler{tools: tt.tools, result: textResult("m", "never")}
			_, deltas, err := chat(t, 0, s, tt.req)
			if ue := userError(t, err, tt.want); ue.Msg != tt.want {
				t.Errorf("message = %q, want %q", ue.Msg, tt.want)
			}
			if len(s.got) != 0 || len(deltas) != 0 {
				t.Errorf("refused request reached the client: %d calls, %d deltas", len(s.got), len(deltas))
			}
		})
	}
}

// With only ask_user offered, a client without tools in sampling is asked
// without tools, and past tool exchanges reach it as text.
func TestChatAskUserOnlyWithoutTools(t *testing.T) {
	req := agent.ChatRequest{
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: "plan my day"},
			{Role: agent.RoleAssistant, Content: "One question first.", ToolCalls: []agent.ToolCall{
				{ID: "c1", Name: "ask_user", Arguments: json.RawMessage(`{ "question": "When do you start?" }`)},
			}},
			{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "ask_user", Content: "9am"},
			{Role: agent.RoleAssistant, Content: "Start at 9."},
			{Role: agent.RoleUser, Content: "thanks"},
		},
		Tools: []agent.ToolSpec{{Name: "ask_user", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	s := &fakeSampler{tools: false, result: textResult("m", "welcome")}
	resp, _, err := chat(t, 0, s, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "welcome" {
		t.Errorf("content = %q, want %q", resp.Message.Content, "welcome")
	}
	want := []mcp.CreateMessageParams{{
		Messages: []mcp.SamplingMessage{
			{Role: mcp.RoleUser, Content: mcp.NewTextContent("plan my day")},
			{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("One question first.\n\n[called the tool ask_user with {\"question\":\"When do you start?\"}]")},
			{Role: mcp.RoleUser, Content: mcp.NewTextContent("[result of ask_user]\n9am")},
			{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("Start at 9.")},
			{Role: mcp.RoleUser, Content: mcp.NewTextContent("thanks")},
		},
		MaxTokens: DefaultMaxTokens,
	}}
	if diff := cmp.Diff(want, s.got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

func TestChatEmptyAnswer(t *testing.T) {
	tests := []struct {
		name   string
		result *mcp.CreateMessageResult
		want   string
	}{
		{"no result", nil, "the client's model returned an empty answer"},
		{"empty text", textResult("m", ""), `the client's model returned an empty answer (stop reason "endTurn")`},
		{"blank text", textResult("m", " \n"), "the client's model returned an empty answer"},
		{"no content", &mcp.CreateMessageResult{Model: "m"}, "the client's model returned an empty answer"},
		{"empty array", &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Content: []any{}}, StopReason: "maxTokens"}, `the client's model returned an empty answer (stop reason "maxTokens")`},
		{"image only", &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Content: map[string]any{"type": "image", "data": "aGk=", "mimeType": "image/png"}}}, "the client's model returned an empty answer"},
		{"unreadable content", &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Content: map[string]any{"type": "hologram"}}}, "the client's model returned content Deskhand cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &fakeSampler{result: tt.result}
			resp, deltas, err := chat(t, 0, s, agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "q"}}})
			userError(t, err, tt.want)
			if diff := cmp.Diff(agent.ChatResponse{}, resp); diff != "" {
				t.Errorf("response with the error (-want +got):\n%s", diff)
			}
			if len(deltas) != 0 {
				t.Errorf("deltas = %v, want none", deltas)
			}
		})
	}
}

func TestChatSamplerError(t *testing.T) {
	boom := errors.New("sampling request failed: user rejected the request")
	req := agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "q"}}}

	t.Run("client failure", func(t *testing.T) {
		_, _, err := chat(t, 0, &fakeSampler{err: boom}, req)
		userError(t, err, "the calling client's model failed: sampling request failed: user rejected the request")
		if !errors.Is(err, boom) {
			t.Errorf("errors.Is(err, boom) = false; err = %v", err)
		}
	})
	for _, tt := range []struct {
		name       string
		cancel     func(context.Context) (context.Context, context.CancelFunc)
		samplerErr error // nil: the context's error
		want       error
	}{
		{"cancelled", context.WithCancel, nil, context.Canceled},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 0)
		}, nil, context.DeadlineExceeded},
		{"cancelled, the client says otherwise", context.WithCancel, boom, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.cancel(t.Context())
			cancel()
			s := &fakeSampler{err: tt.samplerErr}
			if s.err == nil {
				s.err = ctx.Err()
			}
			_, err := Model{}.Chat(agent.WithClientModel(ctx, s), req, nil)
			userError(t, err, "the call ended before the client's model answered")
			if !errors.Is(err, tt.want) {
				t.Errorf("errors.Is(err, %v) = false; err = %v", tt.want, err)
			}
		})
	}
}

func TestChatNoSampler(t *testing.T) {
	const want = "the calling client does not lend its model (it did not declare sampling)"
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"nothing in the context", context.Background()},
		{"something else in the context", agent.WithClientModel(context.Background(), "not a sampler")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Model{}.Chat(tt.ctx, agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "q"}}}, nil)
			if ue := userError(t, err, want); ue.Msg != want || ue.Err != nil {
				t.Errorf("error = %#v, want message %q and no cause", ue, want)
			}
		})
	}
}
