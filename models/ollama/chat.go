package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/server/agent"
)

// Chat sends the conversation to /api/chat with streaming on. onDelta (may
// be nil) receives each piece of content or thinking as it arrives; tool
// calls arrive whole and are returned in the reply. A cancelled or expired
// ctx is returned as ctx.Err(), even when the client reports success.
//
// Before sending, it reads what the model can do (DescribeModel): tools for
// a model without the "tools" capability are refused with
// [ErrNoToolSupport]; num_ctx is sized to the prompt, and the oldest
// messages are left out when it does not fit (see window.go), or
// [ErrContextTooLong] when what must be sent does not. When /api/show
// fails, the model is taken as able to call tools and of unknown context
// length.
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	creq, toolsBytes, err := toAPIRequest(req)
	if err != nil {
		return agent.ChatResponse{}, err
	}
	info, err := m.describe(ctx, req.Model)
	if err != nil && ctx.Err() != nil {
		return agent.ChatResponse{}, ctx.Err()
	}
	if len(req.Tools) > 0 && info.Tools == agent.CapabilityNo {
		return agent.ChatResponse{}, m.refuseTools(ctx, req.Model)
	}
	win, err := fitWindow(req.Model, creq, toolsBytes, info.ContextLength, m.ctxCap)
	if err != nil {
		return agent.ChatResponse{}, err
	}
	creq.Messages = win.messages
	creq.Options = map[string]any{"num_ctx": win.numCtx}
	// Neither cut the prompt (truncate) nor, when the answer outgrows the
	// window, slide it past the system prompt (shift): an answer that runs
	// out of room ends with done reason "length" instead.
	off := false
	creq.Truncate, creq.Shift = &off, &off
	select {
	case m.chats <- struct{}{}:
		defer func() { <-m.chats }()
	case <-ctx.Done():
		return agent.ChatResponse{}, m.userError(ctx, ctx.Err(), req.Model)
	}
	var (
		out     = agent.ChatResponse{Model: req.Model}
		content strings.Builder
		calls   []agent.ToolCall
		done    bool
	)
	err = m.chatStream(ctx, creq, func(r *chatChunk) error {
		if r.Model != "" {
			out.Model = r.Model
		}
		if r.Message.Content != "" || r.Message.Thinking != "" {
			content.WriteString(r.Message.Content)
			if onDelta != nil {
				onDelta(agent.Delta{Content: r.Message.Content, Thinking: r.Message.Thinking})
			}
		}
		for _, tc := range r.Message.ToolCalls {
			call, err := fromAPIToolCall(tc)
			if err != nil {
				return err
			}
			calls = append(calls, call)
		}
		if r.Done {
			done = true
			out.DoneReason = r.DoneReason
			out.PromptTokens = r.PromptEvalCount
			out.OutputTokens = r.EvalCount
		}
		return nil
	})
	// chatStream, like api.Client.Chat, returns nil when ctx ends or the
	// connection is cut mid-stream, so neither err nor done alone says the
	// reply is whole.
	if err != nil || ctx.Err() != nil {
		return agent.ChatResponse{}, m.userError(ctx, err, req.Model)
	}
	if !done {
		return agent.ChatResponse{}, &agent.UserError{Msg: "Ollama stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again", Err: ErrStreamCut}
	}
	out.Message = agent.Message{Role: agent.RoleAssistant, Content: content.String(), ToolCalls: calls}
	out.Trimmed = win.dropped
	if out.Trimmed == 0 && truncatedAnyway(out.PromptTokens, win.numCtx) {
		out.Trimmed = 1 // how much Ollama cut is unknown; that it cut is not
	}
	return out, nil
}

// toAPIRequest maps the core's request onto Ollama's; toolsBytes is the
// length of its tools encoded in JSON, for the window.
func toAPIRequest(req agent.ChatRequest) (_ *api.ChatRequest, toolsBytes int, _ error) {
	stream := true
	out := &api.ChatRequest{
		Model:    req.Model,
		Messages: make([]api.Message, 0, len(req.Messages)),
		Stream:   &stream,
	}
	for _, msg := range req.Messages {
		am := api.Message{
			Role:       string(msg.Role),
			Content:    msg.Content,
			ToolCallID: msg.ToolCallID,
			ToolName:   msg.ToolName,
		}
		for i, call := range msg.ToolCalls {
			args, err := toArguments(call.Arguments)
			if err != nil {
				return nil, 0, fmt.Errorf("ollama: arguments of the call %s to %q: %w", call.ID, call.Name, err)
			}
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{
				ID:       call.ID,
				Function: api.ToolCallFunction{Index: i, Name: call.Name, Arguments: args},
			})
		}
		out.Messages = append(out.Messages, am)
	}
	for _, spec := range req.Tools {
		tool, size, err := apiTools.get(spec)
		if err != nil {
			return nil, 0, err
		}
		out.Tools = append(out.Tools, tool)
		toolsBytes += size + 1 // and the comma or bracket after it
	}
	if toolsBytes > 0 {
		toolsBytes++ // the opening bracket
	}
	if len(req.Format) > 0 {
		out.Format = req.Format
	}
	return out, toolsBytes, nil
}

// toArguments reads a JSON object (or nothing) into Ollama's ordered map.
func toArguments(raw json.RawMessage) (api.ToolCallFunctionArguments, error) {
	args := api.NewToolCallFunctionArguments()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return args, nil
	}
	if trimmed[0] != '{' {
		return args, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(trimmed, &args); err != nil {
		return args, err
	}
	return args, nil
}

// toAPITool converts a tool's JSON Schema. The conversion is lossy: Ollama's
// types keep type, description, enum, items, properties, required, $defs
// and anyOf, and drop the rest (additionalProperties, format, $ref, …).
func toAPITool(spec agent.ToolSpec) (api.Tool, error) {
	var params api.ToolFunctionParameters
	if p := bytes.TrimSpace(spec.Parameters); len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(p, &params); err != nil {
			return api.Tool{}, agent.Userf(err, "the parameters of the tool %q are a JSON Schema Ollama cannot take", spec.Name)
		}
	}
	if params.Type == "" {
		params.Type = "object"
	}
	if params.Properties == nil {
		params.Properties = api.NewToolPropertiesMap() // nil would go out as "properties":null
	}
	return api.Tool{
		Type: "function",
		Function: api.ToolFunction{
			Name:        spec.Name,
			Description: spec.Description,
			Parameters:  params,
		},
	}, nil
}

// fromAPIToolCall maps a call of the model back, giving it an ID if it has
// none so its result can be matched to it.
func fromAPIToolCall(tc api.ToolCall) (agent.ToolCall, error) {
	args, err := json.Marshal(tc.Function.Arguments) // {} when empty
	if err != nil {
		return agent.ToolCall{}, fmt.Errorf("ollama: arguments of the call to %q: %w", tc.Function.Name, err)
	}
	id := tc.ID
	if id == "" {
		id = newCallID()
	}
	return agent.ToolCall{ID: id, Name: tc.Function.Name, Arguments: args}, nil
}

// newCallID makes an ID shaped like Ollama's: "call_" and 8 of [a-z0-9].
func newCallID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("call_xxxxxxxx")
	for i := len("call_"); i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
