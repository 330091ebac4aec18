package sampling

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// noResult answers a tool call that a past turn left unanswered (it failed
// or was cancelled before the tool returned).
const noResult = "error: no result: the turn ended before this tool call was answered"

// messages maps the transcript: system messages to the system prompt (joined
// by blank lines), the rest to sampling messages. With tools, tool calls
// and results become tool_use and tool_result blocks; without, they are
// written as text, since a client that did not declare tools in sampling
// cannot be sent those blocks.
func messages(in []agent.Message, withTools bool) (string, []mcp.SamplingMessage, error) {
	b := builder{withTools: withTools}
	for i, m := range in {
		switch m.Role {
		case agent.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				b.system = append(b.system, m.Content)
			}
		case agent.RoleUser:
			b.flush()
			b.out = append(b.out, textMessage(mcp.RoleUser, m.Content))
		case agent.RoleAssistant:
			b.flush()
			if err := b.assistant(m); err != nil {
				return "", nil, fmt.Errorf("message %d: %w", i, err)
			}
		case agent.RoleTool:
			b.tool(m)
		default:
			return "", nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	b.flush()
	return strings.Join(b.system, "\n\n"), b.out, nil
}

// builder accumulates sampling messages. Between an assistant message that
// calls tools and the next user or assistant message it holds the calls
// and their results, so that they go out as one user message.
type builder struct {
	withTools bool
	system    []string
	out       []mcp.SamplingMessage
	calls     []*pendingCall // the last assistant message's calls (with tools)
	text      []string       // tool exchanges written as text
	ids       int            // IDs minted so far
}

// pendingCall is a tool_use sent, waiting for its tool_result.
type pendingCall struct {
	id     string // as sent in tool_use
	origID string // as recorded (may be empty)
	name   string
	result *mcp.ToolResultContent
}

func (b *builder) assistant(m agent.Message) error {
	hasText := strings.TrimSpace(m.Content) != ""
	switch {
	case len(m.ToolCalls) == 0:
		if hasText { // an empty text block is refused by some model APIs
			b.out = append(b.out, textMessage(mcp.RoleAssistant, m.Content))
		}
		return nil
	case !b.withTools:
		var parts []string
		if hasText {
			parts = append(parts, m.Content)
		}
		for _, c := range m.ToolCalls {
			parts = append(parts, fmt.Sprintf("[called the tool %s with %s]", c.Name, compact(c.Arguments)))
		}
		b.out = append(b.out, textMessage(mcp.RoleAssistant, strings.Join(parts, "\n\n")))
		return nil
	}
	var blocks []mcp.Content
	if hasText {
		blocks = append(blocks, mcp.NewTextContent(m.Content))
	}
	used := make(map[string]bool, len(m.ToolCalls))
	for _, c := range m.ToolCalls {
		input, err := toolInput(c.Arguments)
		if err != nil {
			return fmt.Errorf("tool call %q: %w", c.Name, err)
		}
		id := c.ID
		if id == "" || used[id] { // every tool_use needs its own ID to be answered by
			b.ids++
			id = fmt.Sprintf("deskhand_call_%d", b.ids)
		}
		used[id] = true
		b.calls = append(b.calls, &pendingCall{id: id, origID: c.ID, name: c.Name})
		blocks = append(blocks, mcp.NewToolUseContent(id, c.Name, input))
	}
	b.out = append(b.out, mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: blocks})
	return nil
}

func (b *builder) tool(m agent.Message) {
	call := b.match(m)
	if !b.withTools || call == nil { // a result that answers no call cannot be a tool_result
		name := m.ToolName
		if name == "" {
			name = "a tool"
		}
		b.text = append(b.text, fmt.Sprintf("[result of %s]\n%s", name, m.Content))
		return
	}
	r := toolResult(call.id, m.Content, false)
	call.result = &r
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

// flush emits the tool results held: one user message of tool_result blocks
// only, in the order of the calls, then any tool exchange kept as text.
func (b *builder) flush() {
	if len(b.calls) > 0 {
		results := make([]mcp.Content, 0, len(b.calls))
		for _, c := range b.calls {
			if c.result == nil {
				r := toolResult(c.id, noResult, true)
				c.result = &r
			}
			results = append(results, *c.result)
		}
		b.out = append(b.out, mcp.SamplingMessage{Role: mcp.RoleUser, Content: results})
	}
	if len(b.text) > 0 {
		b.out = append(b.out, textMessage(mcp.RoleUser, strings.Join(b.text, "\n\n")))
	}
	b.calls, b.text = nil, nil
}

func textMessage(role mcp.Role, text string) mcp.SamplingMessage {
	return mcp.SamplingMessage{Role: role, Content: mcp.NewTextContent(text)}
}

func toolResult(id, text string, isError bool) mcp.ToolResultContent {
	content := []mcp.Content{}
	if text != "" {
		content = append(content, mcp.NewTextContent(text))
	}
	return mcp.NewToolResultContent(id, content, isError)
}

// toolInput decodes a call's arguments; none is an empty object.
func toolInput(args json.RawMessage) (map[string]any, error) {
	input := map[string]any{}
	if len(bytes.TrimSpace(args)) == 0 {
		return input, nil
	}
	if err := json.Unmarshal(args, &input); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if input == nil { // null
		input = map[string]any{}
	}
	return input, nil
}

// compact is a call's arguments on one line, for text.
func compact(args json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil || buf.Len() == 0 {
		return "{}"
	}
	return buf.String()
}
