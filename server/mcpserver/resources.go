package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Resource URIs. An agent's description is a listed resource. A
// conversation is read through the template, by its owner only: mcp-go
// lists the same resources to every client, so conversations are never
// listed, and anyone else reading one gets "not found", as for an id
// never given.
const (
	AgentResourcePrefix        = "deskhand://agents/"
	ConversationResourcePrefix = "deskhand://conversations/"
	conversationTemplate       = ConversationResourcePrefix + "{id}"
)

// agentResource describes an agent for a client: what it does and how to
// call it.
func agentResource(a agent.Agent) server.ServerResource {
	uri := AgentResourcePrefix + a.Slug
	text := fmt.Sprintf("# %s\n\n%s\n\nCall the tool `%s` with a `message`", a.Name, strings.TrimSpace(a.Description), a.Slug)
	if a.Conversations {
		text += "; pass back the `conversation` handle an answer carries to continue"
	}
	text += ".\n"
	for i, p := range a.StarterPrompts {
		if i == 0 {
			text += "\nTo start with:\n"
		}
		text += "- " + p + "\n"
	}
	return server.ServerResource{
		Resource: mcp.NewResource(uri, a.Name, mcp.WithResourceDescription(a.Description), mcp.WithMIMEType("text/markdown"),
			mcp.WithResourceIcons(toolIcons(a.Icon)...)),
		Handler: func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/markdown", Text: text}}, nil
		},
	}
}

// starterPrompts offers each of an agent's starter prompts. Their names
// hold a dot, which no slug can, so they never clash.
func starterPrompts(a agent.Agent) []server.ServerPrompt {
	var out []server.ServerPrompt
	for i, p := range a.StarterPrompts {
		text := fmt.Sprintf("Ask the Deskhand agent %q (the tool `%s`): %s", a.Name, a.Slug, p)
		out = append(out, server.ServerPrompt{
			Prompt: mcp.NewPrompt(fmt.Sprintf("%s.%d", a.Slug, i+1),
				mcp.WithPromptTitle(fmt.Sprintf("%s: %s", a.Name, shorten(p, 60))),
				mcp.WithPromptDescription(fmt.Sprintf("Starts a conversation with %s: %s", a.Name, p))),
			Handler: func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult(p, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
			},
		})
	}
	return out
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// readConversationResource serves deskhand://conversations/{id} to the
// conversation's owner.
func (s *Server) readConversationResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id := strings.TrimPrefix(req.Params.URI, ConversationResourcePrefix)
	conv, msgs, err := s.core.Conversations.Read(ctx, PrincipalFrom(ctx), id)
	if errors.Is(err, agent.ErrUnknownConversation) {
		return nil, fmt.Errorf("%s: %w", req.Params.URI, server.ErrResourceNotFound)
	}
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", cmp.Or(conv.Title, conv.ID))
	for _, m := range msgs {
		if (m.Role != agent.RoleUser && m.Role != agent.RoleAssistant) || strings.TrimSpace(m.Content) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n## %s (%s)\n\n%s\n", m.Role, m.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"), m.Content)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: b.String()}}, nil
}

// readResource answers, before mcp-go, a read of someone else's
// conversation with the protocol's "not found" (a resource handler can
// only fail with an internal error). ok is false when it has answered.
func (s *Server) readResource(w http.ResponseWriter, r *http.Request, msg mcpfill.Peek) bool {
	id, isConv := strings.CutPrefix(msg.Params.URI, ConversationResourcePrefix)
	if !isConv {
		return true
	}
	if _, _, err := s.core.Conversations.Read(r.Context(), PrincipalFrom(r.Context()), id); !errors.Is(err, agent.ErrUnknownConversation) {
		return true
	}
	code := mcp.RESOURCE_NOT_FOUND
	if mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) {
		code = mcp.INVALID_PARAMS // as 2026-07-28 has it
	}
	mcpfill.WriteErrorStatus(w, mcpfill.ErrorStatus(r), msg.ID, code, fmt.Sprintf("resource not found: %s", msg.Params.URI), nil)
	return false
}
