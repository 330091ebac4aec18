package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
)

// The read-only session tools (Options.SessionTools). Their names hold a
// dot, which no agent slug can, so they never clash with an agent.
const (
	ConversationsTool = "deskhand.conversations"
	ConversationTool  = "deskhand.conversation"
)

// Paging and trimming of the session tools.
const (
	defaultPage = 20
	maxPage     = 100
	// trimAt is how much of one message the conversation tool returns, as
	// Agno's "trimmed" result mode keeps results small.
	trimAt = 2000
)

func readOnly(t mcp.Tool) mcp.Tool {
	t.Annotations.ReadOnlyHint = mcp.ToBoolPtr(true)
	t.Annotations.DestructiveHint = mcp.ToBoolPtr(false)
	t.Annotations.IdempotentHint = mcp.ToBoolPtr(true)
	t.Annotations.OpenWorldHint = mcp.ToBoolPtr(false)
	return t
}

func (s *Server) sessionTools() []server.ServerTool {
	list := readOnly(mcp.NewTool(ConversationsTool,
		mcp.WithToolTitle("Your conversations"),
		mcp.WithDescription("Lists the conversations you (this client) had with Deskhand's agents, last active first. Pass a conversation's handle as the 'conversation' argument of its agent's tool to continue it, or to deskhand.conversation to read it."),
		mcp.WithNumber("limit", mcp.Description(fmt.Sprintf("How many to list (1-%d, default %d).", maxPage, defaultPage))),
		mcp.WithString("cursor", mcp.Description("nextCursor of the previous page, to list the next one.")),
	))
	read := readOnly(mcp.NewTool(ConversationTool,
		mcp.WithToolTitle("Read a conversation"),
		mcp.WithDescription(fmt.Sprintf("Reads one of your conversations: what was asked and answered, oldest first, each message trimmed to %d characters; tool calls are left out.", trimAt)),
		mcp.WithString("conversation", mcp.Required(), mcp.Description("The conversation's handle.")),
		mcp.WithNumber("limit", mcp.Description(fmt.Sprintf("How many messages (1-%d, default %d).", maxPage, defaultPage))),
		mcp.WithString("cursor", mcp.Description("nextCursor of the previous page, to read on.")),
	))
	return []server.ServerTool{{Tool: list, Handler: s.listConversations}, {Tool: read, Handler: s.readConversation}}
}

// pageArgs reads limit and cursor; the cursor is one of ours, sealed, of
// this kind of listing.
func (s *Server) pageArgs(req mcp.CallToolRequest, kind string) (limit int, mark string, err error) {
	limit = req.GetInt("limit", defaultPage)
	if limit < 1 || limit > maxPage {
		return 0, "", fmt.Errorf("limit must be between 1 and %d", maxPage)
	}
	cursor := req.GetString("cursor", "")
	mark, ok := s.cursors.Decode(cursor)
	if ok {
		mark, ok = strings.CutPrefix(mark, kind)
	}
	if cursor != "" && !ok {
		return 0, "", fmt.Errorf("the cursor is not one this server gave (or the server restarted since): start again without one")
	}
	return limit, mark, nil
}

// Kinds of session-tool cursors.
const (
	conversationsCursor = "conversations:"
	messagesCursor      = "messages:"
)

type conversationItem struct {
	Conversation string    `json:"conversation"`
	Agent        string    `json:"agent"`
	Title        string    `json:"title"`
	UpdatedAt    time.Time `json:"updatedAt"`
	LastStatus   string    `json:"lastStatus,omitempty"`
}

func (s *Server) listConversations(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	limit, mark, err := s.pageArgs(req, conversationsCursor)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	var after agent.PageMark
	if ms, id, ok := strings.Cut(mark, "\x00"); ok {
		n, _ := strconv.ParseInt(ms, 10, 64)
		after = agent.PageMark{UpdatedAt: time.UnixMilli(n), ID: id}
	}
	list, err := s.core.Conversations.ListFor(ctx, PrincipalFrom(ctx), after, limit+1)
	if err != nil {
		return mcp.NewToolResultError(agent.UserMessage(err)), nil
	}
	slugs := map[string]string{}
	for _, a := range s.core.Agents.List() {
		slugs[a.ID] = a.Slug
	}
	out := struct {
		Conversations []conversationItem `json:"conversations"`
		NextCursor    string             `json:"nextCursor,omitempty"`
	}{Conversations: []conversationItem{}}
	for i, c := range list {
		if i == limit {
			last := list[i-1]
			out.NextCursor = s.cursors.Encode(conversationsCursor + strconv.FormatInt(last.UpdatedAt.UnixMilli(), 10) + "\x00" + last.ID)
			break
		}
		out.Conversations = append(out.Conversations, conversationItem{Conversation: c.ID, Agent: slugs[c.AgentID], Title: c.Title, UpdatedAt: c.UpdatedAt, LastStatus: string(c.LastStatus)})
	}
	return structured(out)
}

type messageItem struct {
	Role    string    `json:"role"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	Trimmed bool      `json:"trimmed,omitempty"`
}

func (s *Server) readConversation(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	limit, mark, err := s.pageArgs(req, messagesCursor)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	handle, err := req.RequireString("conversation")
	if err != nil {
		return mcp.NewToolResultError("pass the conversation's handle as 'conversation'"), nil
	}
	conv, msgs, err := s.core.Conversations.Read(ctx, PrincipalFrom(ctx), handle)
	if err != nil {
		return mcp.NewToolResultError(agent.UserMessage(err)), nil
	}
	var shown []messageItem
	for _, m := range msgs {
		if (m.Role != agent.RoleUser && m.Role != agent.RoleAssistant) || strings.TrimSpace(m.Content) == "" {
			continue
		}
		item := messageItem{Role: string(m.Role), Text: m.Content, At: m.CreatedAt}
		if r := []rune(m.Content); len(r) > trimAt {
			item.Text, item.Trimmed = string(r[:trimAt])+"…", true
		}
		shown = append(shown, item)
	}
	start, _ := strconv.Atoi(mark)
	start = min(max(start, 0), len(shown))
	end := min(start+limit, len(shown))
	out := struct {
		Conversation string        `json:"conversation"`
		Title        string        `json:"title"`
		Messages     []messageItem `json:"messages"`
		NextCursor   string        `json:"nextCursor,omitempty"`
	}{Conversation: conv.ID, Title: conv.Title, Messages: append([]messageItem{}, shown[start:end]...)}
	if end < len(shown) {
		out.NextCursor = s.cursors.Encode(messagesCursor + strconv.Itoa(end))
	}
	return structured(out)
}

// structured answers v as structuredContent with its JSON as text.
func structured(v any) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(json.RawMessage(raw), string(raw)), nil
}
