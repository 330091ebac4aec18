package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/deskhand/deskhand/server/agent"
)

// noResult answers a tool call that a past turn left unanswered (it failed
// or was cancelled before the tool returned): the API refuses a tool_use
// whose tool_result is not in the next message.
const noResult = "error: no result: the turn ended before this tool call was answered"

// toolUseID is the shape the API accepts for tool_use IDs; calls recorded
// from another backend may have others (or none).
var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// messages maps the transcript: system messages to system text blocks,
// the rest to user and assistant messages. An assistant's tool calls
// become tool_use blocks; the tool messages that answer them become one
// user message holding a tool_result block for every call, in the order
// of the calls, then any tool message that answers no call, as text.
// Messages with nothing to say are left out, since the API refuses empty
// text blocks.
func messages(in []agent.Message) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var b builder
	for i, m := range in {
		switch m.Role {
		case agent.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				b.system = append(b.system, sdk.TextBlockParam{Text: m.Content})
			}
		case agent.RoleUser:
			b.flush()
			if strings.TrimSpace(m.Content) != "" {
				b.out = append(b.out, sdk.NewUserMessage(sdk.NewTextBlock(m.Content)))
			}
		case agent.RoleAssistant:
			b.flush()
			if err := b.assistant(m); err != nil {
				return nil, nil, fmt.Errorf("anthropic: message %d: %w", i, err)
			}
		case agent.RoleTool:
			b.tool(m)
		default:
			return nil, nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	b.flush()
	return b.system, b.out, nil
}

// builder accumulates the request's messages. Between an assistant message
// that calls tools and the next user or assistant message it holds the
// calls and their results, so that they go out as one user message.
type builder struct {
	system []sdk.TextBlockParam
	out    []sdk.MessageParam
	calls  []*pendingCall // the last assistant message's calls
	orphan []string       // tool messages that answer no call, as text
	ids    int            // IDs minted so far
	used   map[string]bool
}

// pendingCall is a tool_use sent, waiting for its tool_result.
type pendingCall struct {
	id     string // as sent in tool_use
	origID string // as recorded (may be empty or of another shape)
	name   string
	result *sdk.ToolResultBlockParam
}

func (b *builder) assistant(m agent.Message) error {
	var blocks []sdk.ContentBlockParamUnion
	if strings.TrimSpace(m.Content) != "" {
		blocks = append(blocks, sdk.NewTextBlock(m.Content))
	}
	for _, c := range m.ToolCalls {
		input, err := toolInput(c.Arguments)
		if err != nil {
			return fmt.Errorf("tool call %q: %w", c.Name, err)
		}
		id := c.ID
		if !toolUseID.MatchString(id) || b.used[id] { // every tool_use needs its own ID to be answered by
			b.ids++
			id = fmt.Sprintf("toolu_deskhand_%d", b.ids)
		}
		if b.used == nil {
			b.used = map[string]bool{}
		}
		b.used[id] = true
		b.calls = append(b.calls, &pendingCall{id: id, origID: c.ID, name: c.Name})
		blocks = append(blocks, sdk.NewToolUseBlock(id, input, c.Name))
	}
	if len(blocks) > 0 {
		b.out = append(b.out, sdk.NewAssistantMessage(blocks...))
	}
	return nil
}

func (b *builder) tool(m agent.Message) {
	call := b.match(m)
	if call == nil { // a result that answers no call cannot be a tool_result
		name := m.ToolName
		if name == "" {
			name = "a tool"
		}
		b.orphan = append(b.orphan, fmt.Sprintf("[result of %s]\n%s", name, m.Content))
		return
	}
	call.result = toolResult(call.id, m.Content, false)
}

// match finds the unanswered call a tool message answers: by ID, else the
// first of the same name (IDs may be missing from older transcripts).
func (b *builder) match(m agent.Message) *pendingCall {
	if m.ToolCallID != "" {
		for _, c := range b.calls {
			if c.result == nil && c.origID == m.ToolCallID {
				return c
			}
		}
	}
	for _, c := range b.calls {
		if c.result == nil && (m.ToolName == "" || c.name == m.ToolName) {
			return c
		}
	}
	return nil
}

// flush emits what is held as one user message: the tool_result blocks
// first, in the order of the calls (the API wants them before any text),
// then the tool messages that answered no call, as text.
func (b *builder) flush() {
	var blocks []sdk.ContentBlockParamUnion
	for _, c := range b.calls {
		if c.result == nil {
			c.result = toolResult(c.id, noResult, true)
		}
		blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: c.result})
	}
	if len(b.orphan) > 0 {
		blocks = append(blocks, sdk.NewTextBlock(strings.Join(b.orphan, "\n\n")))
	}
	if len(blocks) > 0 {
		b.out = append(b.out, sdk.NewUserMessage(blocks...))
	}
	b.calls, b.orphan = nil, nil
}

// toolResult is a tool_result block: its content one text block, or none
// for an empty result (the API refuses empty text blocks).
func toolResult(id, text string, isError bool) *sdk.ToolResultBlockParam {
	r := &sdk.ToolResultBlockParam{ToolUseID: id}
	if text != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
	}
	if isError {
		r.IsError = sdk.Bool(true)
	}
	return r
}

// toolInput is a call's arguments as sent: the JSON object as recorded
// (its keys in their order), {} for none.
func toolInput(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, fmt.Errorf("arguments are not a JSON object: %.100s", trimmed)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// toolParam is a tool's definition. The API takes JSON Schema for
// input_schema as it is (tools are not strict), with "type": "object";
// properties and required go to their fields, every other keyword along
// with them, and properties keep their order.
func toolParam(spec agent.ToolSpec) (sdk.ToolUnionParam, error) {
	schema := sdk.ToolInputSchemaParam{Properties: json.RawMessage(`{}`)}
	if p := bytes.TrimSpace(spec.Parameters); len(p) > 0 && string(p) != "null" {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(p, &fields); err != nil || fields == nil {
			return sdk.ToolUnionParam{}, agent.Userf(fmt.Errorf("anthropic: tool %q: %v", spec.Name, err),
				"the parameters of the tool %q are not a JSON Schema object", spec.Name)
		}
		for k, v := range fields {
			switch k {
			case "type": // always "object" (the SDK's constant)
			case "properties":
				if string(v) != "null" {
					schema.Properties = v
				}
			case "required":
				var req []string
				if err := json.Unmarshal(v, &req); err != nil {
					return sdk.ToolUnionParam{}, agent.Userf(fmt.Errorf("anthropic: tool %q: required: %w", spec.Name, err),
						"the parameters of the tool %q are not a valid JSON Schema (\"required\" is not a list of names)", spec.Name)
				}
				schema.Required = req
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	tool := &sdk.ToolParam{Name: spec.Name, InputSchema: schema}
	if spec.Description != "" {
		tool.Description = sdk.String(spec.Description)
	}
	return sdk.ToolUnionParam{OfTool: tool}, nil
}
