// Package sampling runs Deskhand's agents on the calling MCP client's model,
// through MCP sampling (sampling/createMessage). [Model] implements the
// core's agent.Model port; the MCP surface puts a [Sampler] in the call's
// context with agent.WithClientModel when the client declared sampling.
//
// The conversation is mapped onto a CreateMessageParams: system messages
// become the system prompt, an assistant's tool calls become tool_use
// blocks, and the tool messages answering them become one user message of
// tool_result blocks only (the 2025-11-25 spec allows nothing else there).
// Tool calls without an ID get one, and a tool call a past turn left
// unanswered gets a tool_result marked as an error, since every tool_use
// must be answered in the next message. For a client that did not declare
// tools in sampling, past tool exchanges are sent as plain text.
//
// Deskhand fixes only maxTokens ([DefaultMaxTokens]); the client chooses
// the model and everything else. What sampling cannot carry is refused
// with a *agent.UserError, never dropped: a response schema, and tools
// other than ask_user when the client did not declare tools in sampling
// (ask_user alone is then left out, so the model simply cannot ask). A
// reply with neither text nor tool calls is an error, not an empty answer.
//
// The reply's content is normalised with mcp.ParseSamplingContent: it is
// typed on legacy requests but map[string]any (or []any) on modern ones.
// There is no streaming: the reply's text reaches onDelta once.
package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// Sampler is the calling client's model as the MCP surface offers it.
type Sampler interface {
	CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// SupportsTools reports whether the client declared tools in sampling.
	SupportsTools() bool
}

// DefaultMaxTokens bounds a reply when Model.MaxTokens is unset. It is the
// only sampling parameter Deskhand fixes (the spec requires one).
const DefaultMaxTokens = 4096

// askUserTool is the core's tool for asking the person a question; it is
// the one tool a turn can do without.
const askUserTool = "ask_user"

// Model runs chats on the calling client's model. The zero value is ready
// to use.
type Model struct {
	// MaxTokens bounds each reply; 0 means DefaultMaxTokens.
	MaxTokens int
}

var _ agent.Model = Model{}

// Chat sends the conversation to the client's model found in ctx and
// returns its reply. Failures a person can act on are *agent.UserError;
// context errors stay visible to errors.Is.
func (m Model) Chat(ctx context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	s, ok := agent.ClientModelFrom(ctx).(Sampler)
	if !ok {
		return agent.ChatResponse{}, agent.Userf(nil, "the calling client does not lend its model (it did not declare sampling)")
	}
	params, err := m.params(req, s.SupportsTools())
	if err != nil {
		return agent.ChatResponse{}, err
	}
	res, err := s.CreateMessage(ctx, params)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			if !errors.Is(err, ctxErr) { // keep the context's error visible to errors.Is
				err = errors.Join(ctxErr, err)
			}
			return agent.ChatResponse{}, agent.Userf(err, "the call ended before the client's model answered")
		}
		return agent.ChatResponse{}, &agent.UserError{Msg: "the calling client's model failed: " + err.Error(), Err: err}
	}
	resp, err := response(res)
	if err != nil {
		return agent.ChatResponse{}, err
	}
	if resp.Message.Content != "" && onDelta != nil {
		onDelta(agent.Delta{Content: resp.Message.Content})
	}
	return resp, nil
}

// params builds the sampling request, refusing what sampling cannot carry.
func (m Model) params(req agent.ChatRequest, toolsOK bool) (mcp.CreateMessageParams, error) {
	if f := strings.TrimSpace(string(req.Format)); f != "" && f != "null" {
		return mcp.CreateMessageParams{}, agent.Userf(nil, "the client's model cannot be asked for structured output; run this agent on Ollama")
	}
	useTools := len(req.Tools) > 0
	if useTools && !toolsOK {
		var needed []string
		for _, t := range req.Tools {
			if t.Name != askUserTool {
				needed = append(needed, t.Name)
			}
		}
		if len(needed) > 0 {
			return mcp.CreateMessageParams{}, agent.Userf(nil, "the client's model cannot use tools (it did not declare tools in sampling), and this agent needs them: %s", strings.Join(needed, ", "))
		}
		useTools = false
	}
	system, msgs, err := messages(req.Messages, toolsOK)
	if err != nil {
		return mcp.CreateMessageParams{}, err
	}
	p := mcp.CreateMessageParams{
		Messages:     msgs,
		SystemPrompt: system,
		MaxTokens:    m.MaxTokens,
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	if useTools {
		if p.Tools, err = tools(req.Tools); err != nil {
			return mcp.CreateMessageParams{}, err
		}
		p.ToolChoice = &mcp.ToolChoice{Mode: mcp.ToolChoiceModeAuto}
	}
	return p, nil
}

// tools maps the tool specs; each schema is passed through as written.
func tools(specs []agent.ToolSpec) ([]mcp.Tool, error) {
	out := make([]mcp.Tool, 0, len(specs))
	for _, spec := range specs {
		schema := json.RawMessage(strings.TrimSpace(string(spec.Parameters)))
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		var obj map[string]any
		if err := json.Unmarshal(schema, &obj); err != nil {
			return nil, agent.Userf(err, "the parameters of the tool %q are not a JSON Schema object", spec.Name)
		}
		out = append(out, mcp.Tool{Name: spec.Name, Description: spec.Description, RawInputSchema: schema})
	}
	return out, nil
}

// response maps the client's reply to the core's.
func response(res *mcp.CreateMessageResult) (agent.ChatResponse, error) {
	if res == nil {
		return agent.ChatResponse{}, agent.Userf(nil, "the client's model returned an empty answer")
	}
	blocks, err := contentBlocks(res.Content)
	if err != nil {
		return agent.ChatResponse{}, agent.Userf(err, "the client's model returned content Deskhand cannot read")
	}
	msg := agent.Message{Role: agent.RoleAssistant}
	var text strings.Builder
	for _, b := range blocks {
		switch c := b.(type) {
		case mcp.TextContent:
			text.WriteString(c.Text)
		case *mcp.TextContent:
			text.WriteString(c.Text)
		case mcp.ToolUseContent:
			call, err := toolCall(c)
			if err != nil {
				return agent.ChatResponse{}, err
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		case *mcp.ToolUseContent:
			call, err := toolCall(*c)
			if err != nil {
				return agent.ChatResponse{}, err
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		}
		// Other blocks (images, audio) have no place in the transcript.
	}
	msg.Content = text.String()
	if strings.TrimSpace(msg.Content) == "" && len(msg.ToolCalls) == 0 {
		if res.StopReason != "" {
			return agent.ChatResponse{}, agent.Userf(nil, "the client's model returned an empty answer (stop reason %q)", res.StopReason)
		}
		return agent.ChatResponse{}, agent.Userf(nil, "the client's model returned an empty answer")
	}
	return agent.ChatResponse{Message: msg, Model: res.Model, DoneReason: res.StopReason}, nil
}

// contentBlocks normalises a sampling message's content, which may be one
// block or an array, typed or decoded as generic JSON, into blocks.
func contentBlocks(content any) ([]mcp.Content, error) {
	parsed, err := mcp.ParseSamplingContent(content)
	if err != nil {
		return nil, err
	}
	switch c := parsed.(type) {
	case nil:
		return nil, nil
	case mcp.Content:
		return []mcp.Content{c}, nil
	case []mcp.Content:
		return c, nil
	}
	return nil, fmt.Errorf("unexpected content of type %T", parsed)
}

func toolCall(c mcp.ToolUseContent) (agent.ToolCall, error) {
	if c.Name == "" {
		return agent.ToolCall{}, agent.Userf(nil, "the client's model called a tool without naming it")
	}
	input := c.Input
	if input == nil {
		input = map[string]any{}
	}
	args, err := json.Marshal(input)
	if err != nil {
		return agent.ToolCall{}, agent.Userf(err, "the client's model called the tool %q with arguments Deskhand cannot read", c.Name)
	}
	if args[0] != '{' {
		return agent.ToolCall{}, agent.Userf(fmt.Errorf("arguments %.200s", args), "the client's model called the tool %q with arguments that are not a JSON object", c.Name)
	}
	return agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: args}, nil
}
