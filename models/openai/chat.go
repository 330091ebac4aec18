package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deskhand/deskhand/server/agent"
)

// Chat sends the conversation to /chat/completions with streaming on.
// onDelta (may be nil) receives each piece of content or reasoning as it
// arrives; tool calls are put together from their streamed pieces and
// returned whole in the reply. A cancelled or expired ctx is returned as
// ctx.Err(), and the request is cancelled upstream.
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	if err := m.missingKey(); err != nil {
		return agent.ChatResponse{}, err
	}
	params, err := toParams(req)
	if err != nil {
		return agent.ChatResponse{}, err
	}
	asked := request{model: req.Model, tools: len(params.Tools) > 0, schema: len(req.Format) > 0}
	if !m.noStreamOptions.Load() {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		asked.streamOptions = true
	}
	resp, err := m.stream(ctx, params, asked, onDelta)
	if asked.streamOptions && errors.Is(err, errStreamOptionsRefused) {
		// Nothing was streamed: call again without them, and from now on.
		m.noStreamOptions.Store(true)
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
		asked.streamOptions = false
		resp, err = m.stream(ctx, params, asked, onDelta)
	}
	return resp, err
}

// stream makes one streamed call. The request goes through the SDK
// (serialisation, key, retries, errors) and so does the stream's framing
// (packages/ssestream: data lines, [DONE], an "error" event); each chunk
// is decoded into [chunk], the few fields Deskhand reads, since the SDK's
// ChatCompletionChunk decoder, reflecting over every field of the API,
// cost more than the fake server's whole work per token (see
// BenchmarkStream1000Tokens).
func (m *Model) stream(ctx context.Context, params openai.ChatCompletionNewParams, asked request, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	ctx, fail := withFailure(ctx)
	var raw *http.Response
	_, err := m.chat.New(ctx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	st := ssestream.NewStream[chunk](ssestream.NewDecoder(raw), err)
	defer st.Close()
	var (
		r       reply
		started bool
	)
	for st.Next() {
		started = true
		c := st.Current()
		if err := r.add(&c, onDelta); err != nil {
			return agent.ChatResponse{}, agent.Userf(fmt.Errorf("%w: %w", ErrServerFailed, err),
				"%s sent a reply Deskhand cannot put together: %s", capitalize(m.who()), err)
		}
	}
	err = st.Err()
	// began: the server answered 2xx, so the stream itself had started.
	began := raw != nil && raw.StatusCode < 300
	var se *ssestream.StreamError
	var je *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case ctx.Err() != nil, err != nil && (!began || errors.As(err, &se)):
		return agent.ChatResponse{}, m.userError(ctx, err, fail, asked)
	case errors.As(err, &je), errors.As(err, &te):
		return agent.ChatResponse{}, agent.Userf(fmt.Errorf("%w: %w", ErrServerFailed, err),
			"%s sent a reply Deskhand cannot read (%s)", capitalize(m.who()), err)
	case err == nil && !started && !isEventStream(raw):
		return agent.ChatResponse{}, agent.Userf(fmt.Errorf("%w: content type %q", ErrServerFailed, raw.Header.Get("Content-Type")),
			"%s did not stream its answer (it sent %q, not server-sent events) — is the base URL that of an OpenAI-compatible API? It usually ends in /v1",
			capitalize(m.who()), raw.Header.Get("Content-Type"))
	case err != nil || r.finish == "":
		// The stream had started: whatever broke it, the answer is not whole.
		cause := ErrStreamCut
		if err != nil {
			cause = fmt.Errorf("%w: %w", ErrStreamCut, err)
		}
		return agent.ChatResponse{}, &agent.UserError{
			Msg: capitalize(m.who()) + " stopped in the middle of its answer (its connection was cut: did it crash or restart?); nothing of that answer was kept, so call again",
			Err: cause,
		}
	}
	if r.refusal.Len() > 0 && r.content.Len() == 0 && len(r.calls) == 0 {
		return agent.ChatResponse{}, agent.Userf(ErrRefusal, "model '%s' declined to answer: %s", asked.model, shorten(r.refusal.String()))
	}
	out := agent.ChatResponse{
		Message:      agent.Message{Role: agent.RoleAssistant, Content: r.content.String()},
		Model:        cmp.Or(r.model, asked.model),
		PromptTokens: int(r.prompt),
		OutputTokens: int(r.output),
		DoneReason:   r.finish,
	}
	for _, c := range r.calls {
		if c.name == "" && c.args.Len() == 0 {
			continue // an index the server skipped
		}
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, agent.ToolCall{
			ID:        cmp.Or(c.id, newCallID()),
			Name:      c.name,
			Arguments: json.RawMessage(args), // as the model wrote it, valid JSON or not
		})
	}
	return out, nil
}

func isEventStream(res *http.Response) bool {
	ct, _, _ := strings.Cut(res.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// chunk is what Deskhand reads of a chat.completion.chunk
// (https://platform.openai.com/docs/api-reference/chat-streaming). The
// fields some servers fill in their own way are kept raw.
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index        int64  `json:"index"`
		FinishReason string `json:"finish_reason"`
		Delta        struct {
			// Content is a string, or (Mistral's reasoning models) an
			// array of parts.
			Content json.RawMessage `json:"content"`
			// ReasoningContent (llama.cpp, vLLM, LM Studio, DeepSeek) and
			// Reasoning (Ollama, OpenRouter) carry the model's thinking.
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			Refusal          json.RawMessage `json:"refusal"`
			ToolCalls        []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// reply is a streamed reply being put together.
type reply struct {
	model            string
	finish           string
	prompt, output   int64
	content, refusal strings.Builder
	calls            []*callBuilder
	// open maps a tool call index of the stream to its call in calls.
	open map[int64]*callBuilder
}

type callBuilder struct {
	id, name string
	args     strings.Builder
}

// maxToolCalls bounds the calls one reply may open.
const maxToolCalls = 1024

// add takes in a chunk of the first choice (n is 1), passing its text on.
func (r *reply) add(c *chunk, onDelta func(agent.Delta)) error {
	r.model = cmp.Or(c.Model, r.model)
	// The last usage seen wins: OpenAI sends it once at the end,
	// llama.cpp in the finish chunk, vLLM may send running totals.
	if c.Usage != nil {
		r.prompt, r.output = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		r.finish = cmp.Or(ch.FinishReason, r.finish)
		d := agent.Delta{Content: str(ch.Delta.Content), Thinking: cmp.Or(str(ch.Delta.ReasoningContent), str(ch.Delta.Reasoning))}
		if strings.HasPrefix(string(ch.Delta.Content), "[") {
			d.Content, d.Thinking = parts(ch.Delta.Content, d.Thinking)
		}
		r.content.WriteString(d.Content)
		r.refusal.WriteString(str(ch.Delta.Refusal))
		if onDelta != nil && (d.Content != "" || d.Thinking != "") {
			onDelta(d)
		}
		for _, tc := range ch.Delta.ToolCalls {
			b, err := r.call(tc.Index, tc.ID)
			if err != nil {
				return err
			}
			// A name comes whole (some servers repeat it in every delta).
			if b.name == "" {
				b.name = tc.Function.Name
			} else if tc.Function.Name != "" && tc.Function.Name != b.name {
				b.name += tc.Function.Name
			}
			b.args.WriteString(tc.Function.Arguments)
		}
	}
	return nil
}

// call finds the call a tool call delta continues, or opens it. Index -1
// is read as 0 (a single call, as some servers number it); a new ID at an
// index whose call already has another ID opens a new call (servers that
// send every call at index 0).
func (r *reply) call(index int64, id string) (*callBuilder, error) {
	if index == -1 {
		index = 0
	}
	if index < 0 {
		return nil, fmt.Errorf("tool call index %d", index)
	}
	if r.open == nil {
		r.open = make(map[int64]*callBuilder)
	}
	b := r.open[index]
	if b == nil || (id != "" && b.id != "" && id != b.id) {
		if len(r.calls) >= maxToolCalls {
			return nil, fmt.Errorf("more than %d tool calls", maxToolCalls)
		}
		b = &callBuilder{}
		r.calls = append(r.calls, b)
		r.open[index] = b
	}
	if b.id == "" {
		b.id = id
	}
	return b, nil
}

// str reads a JSON string ("" for anything else), without a second
// decoding when it holds no escape.
func str(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if inner := raw[1 : len(raw)-1]; !bytes.ContainsRune(inner, '\\') {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// parts reads content sent as an array of parts: "text" parts are the
// content, "thinking" parts (whose "thinking" holds text parts) are added
// to thinking.
func parts(raw json.RawMessage, thinking string) (content, think string) {
	var ps []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(raw, &ps) != nil {
		return "", thinking
	}
	var c, t strings.Builder
	t.WriteString(thinking)
	for _, p := range ps {
		switch p.Type {
		case "text":
			c.WriteString(p.Text)
		case "thinking":
			if s := text(p.Thinking); s != "" && !strings.HasPrefix(s, "[") {
				t.WriteString(s)
			} else {
				inner, _ := parts(p.Thinking, "")
				t.WriteString(inner)
			}
		}
	}
	return c.String(), t.String()
}

// schemaName names the response schema on the wire.
const schemaName = "response"

// toParams maps the core's request onto a chat completion request.
func toParams(req agent.ChatRequest) (openai.ChatCompletionNewParams, error) {
	msgs, err := toMessages(req.Messages)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model), Messages: msgs}
	for _, spec := range req.Tools {
		params, err := toParameters(spec)
		if err != nil {
			return openai.ChatCompletionNewParams{}, err
		}
		fn := shared.FunctionDefinitionParam{Name: spec.Name, Parameters: params}
		if spec.Description != "" {
			fn.Description = openai.String(spec.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if format := bytes.TrimSpace(req.Format); len(format) > 0 && string(format) != "null" {
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(format, &schema); err != nil {
			return openai.ChatCompletionNewParams{}, agent.Userf(err, "the agent's response schema is not a JSON Schema object")
		}
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   schemaName,
				Schema: json.RawMessage(format), // as written: OpenAI answers in the order of its properties
				Strict: openai.Bool(strictable(format)),
			}},
		}
	}
	return p, nil
}

// toParameters reads a tool's JSON Schema, keeping what is under each
// top-level key as written.
func toParameters(spec agent.ToolSpec) (shared.FunctionParameters, error) {
	out := shared.FunctionParameters{}
	if raw := bytes.TrimSpace(spec.Parameters); len(raw) > 0 && string(raw) != "null" {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, agent.Userf(err, "the parameters of the tool %q are not a JSON Schema object", spec.Name)
		}
		for k, v := range fields {
			out[k] = v
		}
	}
	if _, ok := out["type"]; !ok {
		out["type"] = "object"
	}
	if _, ok := out["properties"]; !ok {
		out["properties"] = json.RawMessage(`{}`)
	}
	return out, nil
}

// strictable reports whether OpenAI's strict mode takes the schema as it
// is: every object closed ("additionalProperties": false) and all its
// properties required, all the way down. Strict mode guarantees the shape
// but refuses other schemas (400), so it is asked only for these; the
// others are still sent, and followed without the guarantee.
func strictable(schema json.RawMessage) bool {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return false
	}
	return strictNode(v)
}

func strictNode(v any) bool {
	switch n := v.(type) {
	case []any:
		for _, e := range n {
			if !strictNode(e) {
				return false
			}
		}
		return true
	case map[string]any:
	default:
		return true
	}
	obj := v.(map[string]any)
	props, hasProps := obj["properties"].(map[string]any)
	if obj["type"] == "object" || hasProps {
		if obj["additionalProperties"] != false {
			return false
		}
		req, _ := obj["required"].([]any)
		if len(req) != len(props) {
			return false
		}
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := props[name]; !ok {
				return false
			}
		}
	}
	for _, key := range []string{"properties", "$defs", "definitions"} {
		if sub, ok := obj[key].(map[string]any); ok {
			for _, s := range sub {
				if !strictNode(s) {
					return false
				}
			}
		}
	}
	for _, key := range []string{"items", "anyOf", "allOf", "oneOf", "prefixItems"} {
		if sub, ok := obj[key]; ok && !strictNode(sub) {
			return false
		}
	}
	return true
}

// noResult answers a tool call that a past turn left unanswered (it failed
// or was cancelled before the tool returned): OpenAI refuses an assistant
// message whose tool calls are not each followed by their result.
const noResult = "error: no result: the turn ended before this tool call was answered"

// pendingCall is a tool call sent, waiting for its result.
type pendingCall struct {
	id       string // as sent
	origID   string // as recorded (may be empty)
	name     string
	answered bool
}

// toMessages maps the transcript. Every tool call is followed by exactly
// one result, as OpenAI requires: a missing one is answered [noResult], a
// result that answers no call is sent as the user's text.
func toMessages(in []agent.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(in))
	var pending []*pendingCall
	flush := func() {
		for _, p := range pending {
			if !p.answered {
				out = append(out, openai.ToolMessage(noResult, p.id))
			}
		}
		pending = nil
	}
	for i, msg := range in {
		switch msg.Role {
		case agent.RoleSystem:
			flush()
			out = append(out, openai.SystemMessage(msg.Content))
		case agent.RoleUser:
			flush()
			out = append(out, openai.UserMessage(msg.Content))
		case agent.RoleAssistant:
			flush()
			am := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				am.Content.OfString = openai.String(msg.Content)
			}
			for j, call := range msg.ToolCalls {
				id := cmp.Or(call.ID, fmt.Sprintf("call_m%dc%d", i, j))
				args := strings.TrimSpace(string(call.Arguments))
				if args == "" || args == "null" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       id,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: call.Name, Arguments: args},
					},
				})
				pending = append(pending, &pendingCall{id: id, origID: call.ID, name: call.Name})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &am})
		case agent.RoleTool:
			if p := match(pending, msg); p != nil {
				p.answered = true
				out = append(out, openai.ToolMessage(msg.Content, p.id))
				continue
			}
			flush()
			name := cmp.Or(msg.ToolName, "a tool")
			out = append(out, openai.UserMessage(fmt.Sprintf("(result of %s) %s", name, msg.Content)))
		default:
			return nil, fmt.Errorf("openai: message %d: unknown role %q", i, msg.Role)
		}
	}
	flush()
	return out, nil
}

// match finds the call a tool result answers: by ID, else (for a result
// recorded without one) the first unanswered call to the same tool.
func match(pending []*pendingCall, msg agent.Message) *pendingCall {
	for _, p := range pending {
		if !p.answered && msg.ToolCallID != "" && p.origID == msg.ToolCallID {
			return p
		}
	}
	if msg.ToolCallID != "" {
		return nil
	}
	for _, p := range pending {
		if !p.answered && p.origID == "" && (msg.ToolName == "" || p.name == msg.ToolName) {
			return p
		}
	}
	return nil
}

// newCallID makes an ID for a call the server sent without one, shaped
// like OpenAI's: "call_" and 24 of [A-Za-z0-9].
func newCallID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, len("call_")+24)
	copy(b, "call_")
	for i := len("call_"); i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}
