package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/deskhand/deskhand/server/agent"
)

// Chat sends the conversation to POST /v1/messages with "stream": true.
// onDelta (may be nil) receives each piece of text or thinking as it
// arrives; tool calls are put together from their input_json_delta pieces
// and returned whole in the reply. PromptTokens counts input_tokens and
// the cache's (cache_creation_input_tokens, cache_read_input_tokens);
// DoneReason is the stop_reason ("end_turn", "tool_use", "max_tokens", …).
// A cancelled or expired ctx is returned as ctx.Err().
//
// A stop_reason of "refusal" is an error ([ErrRefused]), as is a reply cut
// at max_tokens in the middle of a tool call or of a structured answer
// ([ErrTruncated]); a text reply cut there is returned with DoneReason
// "max_tokens".
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return agent.ChatResponse{}, err
	}
	// The request goes through the SDK (serialisation, key, retries,
	// errors) and so does the stream's framing (packages/ssestream: event
	// and data lines, ping, an "error" event as an *sdk.Error); each event
	// is decoded into [event], the few fields Deskhand reads, since the
	// SDK's MessageStreamEventUnion decoder and Message.Accumulate,
	// reflecting over every field of the API and re-encoding each block's
	// JSON at its end, cost several times the fake server's own work per
	// token (see BenchmarkAdapters in server/bench).
	var raw *http.Response
	err = m.client.Post(ctx, "v1/messages", params, &raw, option.WithJSONSet("stream", true))
	stream := ssestream.NewStream[event](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	var (
		msg     message
		stopped bool // message_stop arrived
	)
	for stream.Next() {
		ev := stream.Current()
		if err := msg.add(&ev); err != nil {
			return agent.ChatResponse{}, agent.Userf(err, "Anthropic at %s sent a reply Deskhand does not understand", m.base)
		}
		switch ev.Type {
		case "content_block_delta":
			if onDelta == nil {
				break
			}
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					onDelta(agent.Delta{Content: ev.Delta.Text})
				}
			case "thinking_delta":
				if ev.Delta.Thinking != "" {
					onDelta(agent.Delta{Thinking: ev.Delta.Thinking})
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil || ctx.Err() != nil {
		return agent.ChatResponse{}, m.userError(ctx, err, req.Model)
	}
	if !stopped {
		return agent.ChatResponse{}, &agent.UserError{Msg: msgStreamCut, Err: ErrStreamCut}
	}
	return reply(req, &msg)
}

// params maps the core's request onto the SDK's.
func (m *Model) params(req agent.ChatRequest) (sdk.MessageNewParams, error) {
	if strings.TrimSpace(req.Model) == "" {
		return sdk.MessageNewParams{}, errNoModel
	}
	system, msgs, err := messages(req.Messages)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	p := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: m.maxTokens,
		System:    system,
		Messages:  msgs,
	}
	for _, spec := range req.Tools {
		tool, err := toolParam(spec)
		if err != nil {
			return sdk.MessageNewParams{}, err
		}
		p.Tools = append(p.Tools, tool)
	}
	if f := bytes.TrimSpace(req.Format); len(f) > 0 && string(f) != "null" {
		schema, err := outputSchema(f)
		if err != nil {
			return sdk.MessageNewParams{}, err
		}
		p.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	return p, nil
}

// reply maps the accumulated message onto the core's reply.
func reply(req agent.ChatRequest, msg *message) (agent.ChatResponse, error) {
	u := msg.usage
	out := agent.ChatResponse{
		Model:        msg.model,
		PromptTokens: int(u.input + u.cacheCreation + u.cacheRead),
		OutputTokens: int(u.output),
		DoneReason:   string(msg.stopReason),
	}
	if out.Model == "" {
		out.Model = req.Model
	}
	var (
		text  strings.Builder
		calls []agent.ToolCall
		last  string // type of the last content block
	)
	for _, b := range msg.content {
		last = b.typ
		switch b.typ {
		case "text":
			text.Write(b.text)
		case "tool_use":
			args := bytes.TrimSpace(b.input)
			if len(args) == 0 || string(args) == "null" {
				args = []byte(`{}`)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, args); err != nil || buf.Bytes()[0] != '{' {
				return agent.ChatResponse{}, agent.Userf(fmt.Errorf("anthropic: input of tool_use %s: %.200s", b.id, args),
					"Anthropic sent a call of the tool %q whose arguments are not a JSON object", b.name)
			}
			calls = append(calls, agent.ToolCall{ID: b.id, Name: b.name, Arguments: buf.Bytes()})
		}
	}
	switch msg.stopReason {
	case sdk.StopReasonRefusal:
		why := ""
		if e := strings.TrimSpace(msg.stopExplanation); e != "" {
			why = " (" + shorten(e) + ")"
		}
		return agent.ChatResponse{}, agent.Userf(ErrRefused, "Claude declined to answer this request%s; rephrase it or start a new conversation", why)
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		limit := "its max_tokens"
		if msg.stopReason == sdk.StopReasonModelContextWindowExceeded {
			limit = "the end of the model's context window"
		}
		switch {
		case last == "tool_use":
			return agent.ChatResponse{}, agent.Userf(ErrTruncated, "Claude's answer reached %s in the middle of a tool call; raise the maximum of output tokens, or start a new conversation", limit)
		case len(bytes.TrimSpace(req.Format)) > 0:
			return agent.ChatResponse{}, agent.Userf(ErrTruncated, "Claude's answer reached %s before its JSON was complete; raise the maximum of output tokens, or start a new conversation", limit)
		}
	}
	out.Message = agent.Message{Role: agent.RoleAssistant, Content: text.String(), ToolCalls: calls}
	return out, nil
}
