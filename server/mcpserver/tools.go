package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// ConversationMetaKey names the conversation handle in _meta, on results
// and (as an alternative to the argument) on requests.
const ConversationMetaKey = "io.deskhand/conversation"

// agentTool describes an agent as an MCP tool.
func (s *Server) agentTool(a agent.Agent, capacity int, idle time.Duration) mcp.Tool {
	props := map[string]any{
		"message": map[string]any{"type": "string", "description": "What you want the agent to do or answer."},
		"context": map[string]any{"type": "string", "description": "Optional background the agent should know; it is placed before the message."},
	}
	if a.Conversations {
		props["conversation"] = map[string]any{
			"type": "string",
			"description": fmt.Sprintf("Handle of a conversation to continue, as returned by an earlier call (in _meta %q and the last text block). "+
				"Leave it out to start a new conversation. Conversations are kept on disk and survive restarts; "+
				"up to %d are held in memory (least recently used first out) and one idle for %s is unloaded, to be reloaded from disk when used again.",
				ConversationMetaKey, capacity, idle),
		}
	}
	input := map[string]any{"type": "object", "properties": props, "required": []string{"message"}, "additionalProperties": false}
	rawInput, _ := json.Marshal(input)

	description := a.Description
	if description == "" {
		description = fmt.Sprintf("Ask the agent %q.", a.Name)
	}
	tool := mcp.Tool{
		Name:           a.Slug,
		Title:          a.Name,
		Description:    description,
		RawInputSchema: rawInput,
		Annotations:    toolAnnotations(a.Name, s.core.Agents.Hints(a)),
		Icons:          toolIcons(a.Icon),
	}
	tool.RawOutputSchema, _ = outputSchema(a.ResponseSchema)
	return tool
}

// outputSchema turns an agent's response schema into an MCP outputSchema,
// which must describe an object: any other root is wrapped as "result".
func outputSchema(schema json.RawMessage) (json.RawMessage, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	if isObjectSchema(schema) {
		return schema, false
	}
	var inner any
	if err := json.Unmarshal(schema, &inner); err != nil {
		return nil, false
	}
	out, _ := json.Marshal(map[string]any{
		"type":       "object",
		"properties": map[string]any{"result": inner},
		"required":   []string{"result"},
	})
	return out, true
}

func isObjectSchema(schema json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Type == "object"
}

// callArgs are the arguments of an agent tool.
type callArgs struct {
	Message      string
	Context      string
	Conversation string
	// HasConversation tells a blank handle (start afresh) from none
	// (continue the legacy session's conversation, if any).
	HasConversation bool
}

// parseArgs checks argument names and types, with messages a model can act on.
func parseArgs(raw map[string]any, conversations bool) (callArgs, error) {
	var out callArgs
	var unknown []string
	for k, v := range raw {
		var dst *string
		switch k {
		case "message":
			dst = &out.Message
		case "context":
			dst = &out.Context
		case "conversation":
			if !conversations {
				return out, agent.ErrConversationsOff
			}
			dst = &out.Conversation
			out.HasConversation = true
		default:
			unknown = append(unknown, k)
			continue
		}
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return out, agent.Userf(nil, "argument '%s' must be a string, not %s", k, jsonType(v))
		}
		*dst = s
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		allowed := "message, context"
		if conversations {
			allowed += ", conversation"
		}
		return out, agent.Userf(nil, "unknown argument(s) %s: this tool takes %s", strings.Join(unknown, ", "), allowed)
	}
	if _, present := raw["message"]; !present {
		return out, agent.Userf(nil, "argument 'message' is required")
	}
	return out, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case float64, json.Number, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// errClientCancelled is why a turn stopped when its client cancelled it.
var errClientCancelled = &agent.UserError{Msg: "the client cancelled the call; the turn was stopped"}

// handleCall runs one call of the agent with the given slug.
func (s *Server) handleCall(slug string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, ok := s.core.Agents.Served(slug)
		switch {
		case !ok && s.core.Settings.Paused():
			return mcp.NewToolResultError(agent.PausedMessage), nil
		case !ok:
			return mcp.NewToolResultError(fmt.Sprintf("the agent %q is no longer available", slug)), nil
		}
		raw, ok := req.Params.Arguments.(map[string]any)
		if !ok && req.Params.Arguments != nil {
			return mcp.NewToolResultError("arguments must be a JSON object"), nil
		}
		args, err := parseArgs(raw, a.Conversations)
		if err != nil {
			return mcp.NewToolResultError(agent.UserMessage(err)), nil
		}
		if !args.HasConversation && a.Conversations {
			args.Conversation = metaHandle(req.Params.Meta)
		}

		run := agent.RunRequest{
			Agent:        slug,
			Principal:    PrincipalFrom(ctx),
			Conversation: args.Conversation,
			Message:      args.Message,
			Context:      args.Context,
			TurnID:       uuid.NewString(),
		}
		if server.IsModernRequest(ctx) {
			return s.callModern(ctx, req, a, run)
		}

		// Legacy sessions continue their conversation when the call names
		// none; a blank handle asks for a fresh one.
		sessionID := mcpfill.LegacySessionID(ctx)
		if !args.HasConversation && run.Conversation == "" && sessionID != "" && a.Conversations {
			run.Conversation = s.sessions.Recall(sessionID, slug)
		}
		// A legacy client that drops its connection does not cancel the
		// turn: it finishes and is recorded, as that revision expects; its
		// notifications/cancelled does (mcpfill.LegacyCalls).
		stop := s.followProgress(ctx, progressToken(req), run.TurnID)
		turnCtx, done := s.legacyCalls.WorkContext(s.legacyContext(ctx))
		res, err := s.core.Conversations.Run(turnCtx, run)
		done()
		stop()
		if res != nil && a.Conversations && sessionID != "" {
			s.sessions.Remember(sessionID, slug, res.Conversation.ID)
		}
		return s.finish(a, run.Conversation, res, err), nil
	}
}

// finish turns a turn's outcome into the tool result.
func (s *Server) finish(a agent.Agent, handle string, res *agent.RunResult, err error) *mcp.CallToolResult {
	if err != nil {
		msg := agent.UserMessage(err)
		if errors.Is(err, agent.ErrConversationBusy) && s.paused.Holds(strings.TrimSpace(handle)) {
			msg = "this conversation is waiting for the answer to a question: answer it (retry your call with the answer), or start a new conversation"
		}
		out := mcp.NewToolResultError(msg)
		if res != nil && a.Conversations {
			attachHandle(out, res.Conversation.ID)
		}
		return out
	}
	return s.result(a, res)
}

// result builds the tool result of a finished turn.
func (s *Server) result(a agent.Agent, res *agent.RunResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(res.Text)}}
	if res.Structured != nil {
		var v any
		if err := json.Unmarshal(res.Structured, &v); err != nil {
			return mcp.NewToolResultError("the agent's answer is not valid JSON")
		}
		if _, wrapped := outputSchema(a.ResponseSchema); wrapped {
			v = map[string]any{"result": v}
		}
		out.StructuredContent = v
		if text, err := json.Marshal(v); err == nil {
			out.Content = []mcp.Content{mcp.NewTextContent(string(text))}
		}
	}
	if a.Conversations {
		attachHandle(out, res.Conversation.ID)
	}
	return out
}

// attachHandle returns the conversation handle twice: as a last text block
// the model can read, and in _meta for programs.
func attachHandle(out *mcp.CallToolResult, handle string) {
	if handle == "" {
		return
	}
	out.Content = append(out.Content, mcp.NewTextContent(
		fmt.Sprintf("conversation: %s (pass it as \"conversation\" to continue this conversation)", handle)))
	if out.Meta == nil {
		out.Meta = &mcp.Meta{}
	}
	if out.Meta.AdditionalFields == nil {
		out.Meta.AdditionalFields = map[string]any{}
	}
	out.Meta.AdditionalFields[ConversationMetaKey] = handle
}

func metaHandle(meta *mcp.Meta) string {
	if meta == nil {
		return ""
	}
	h, _ := meta.AdditionalFields[ConversationMetaKey].(string)
	return h
}
