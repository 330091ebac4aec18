package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// teamReplies scripts the fake Ollama for a team: "lead" hands the
// client's message to its member "researcher" and answers with what came
// back; "researcher" answers.
func teamReplies(req api.ChatRequest) ollamatest.Reply {
	if len(req.Messages) == 0 {
		return ollamatest.Reply{Content: "no messages"}
	}
	last := req.Messages[len(req.Messages)-1]
	switch req.Messages[0].Content {
	case "I am lead":
		if last.Role == "tool" {
			return ollamatest.Reply{Content: "lead says: " + last.Content}
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_1", "agent_researcher", `{"message":"look up: `+last.Content+`"}`)}}
	case "I am researcher":
		switch {
		case last.Role == "tool":
			return ollamatest.Reply{Content: "researcher heard " + last.Content}
		case strings.Contains(last.Content, "ask me"):
			return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_2", "ask_user", `{"question":"Which one?"}`)}}
		}
		return ollamatest.Reply{Content: "found 42 for " + last.Content}
	}
	return ollamatest.EchoReply(req)
}

// TestTeamEndToEnd: a client calls the lead, which hands the work to its
// member; the answer composed from the member's reaches the client, with
// the member's progress, on both eras. A client that cannot see the
// member does not reach it through the lead.
func TestTeamEndToEnd(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(teamReplies))
	ctx := t.Context()
	base, ok := h.core.Agents().BySlug("assistant")
	if !ok {
		t.Fatal("no default agent")
	}
	researcher := base
	researcher.ID, researcher.Slug, researcher.Name, researcher.Prompt, researcher.Description = "", "researcher", "Researcher", "I am researcher", "Finds things out."
	researcher, err := h.core.Agents().Save(ctx, researcher)
	if err != nil {
		t.Fatal(err)
	}
	lead := base
	lead.ID, lead.Slug, lead.Name, lead.Prompt, lead.Team = "", "lead", "Lead", "I am lead", []string{researcher.ID}
	if _, err := h.core.Agents().Save(ctx, lead); err != nil {
		t.Fatal(err)
	}
	token := h.token("team")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			log := &progressLog{got: map[string][]string{}}
			c := connect(t, h.URL, era, token)
			log.observe(c)
			var req mcp.CallToolRequest
			req.Params.Name = "lead"
			req.Params.Arguments = map[string]any{"message": "the answer"}
			req.Params.Meta = &mcp.Meta{ProgressToken: era}
			res, err := c.CallTool(ctx, req)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			if got, want := firstText(res), "lead says: found 42 for look up: the answer"; got != want {
				t.Errorf("answer = %q, want %q", got, want)
			}
			want := []string{"thinking (model round 1)", "calling the tool agent_researcher", "researcher: thinking (model round 1)", "thinking (model round 2)"}
			if got := log.of(era); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("progress = %q\nwant       %q", got, want)
			}
			// The member's conversation is not the client's to list.
			list, err := h.core.Conversations().ListFor(ctx, clientID(t, h, "team"), agent.PageMark{}, 50)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list {
				if s.AgentID == researcher.ID {
					t.Errorf("the researcher's sub-conversation is listed: %+v", s)
				}
			}
		})
	}

	// The member's question reaches the client that called the lead, and
	// the lead's turn completes with the answer.
	for _, era := range eras {
		t.Run("question/"+era, func(t *testing.T) {
			var asked []string
			c := connect(t, h.URL, era, h.token("asked-"+era),
				client.WithElicitationHandler(elicitFn(func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					asked = append(asked, r.Params.Message)
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"answer": "the red one"}}}, nil
				})))
			res := call(t, c, "lead", map[string]any{"message": "ask me"}, nil)
			if got, want := firstText(res), "lead says: researcher heard the red one"; res.IsError || got != want {
				t.Errorf("answer = %q (error %v), want %q", got, res.IsError, want)
			}
			if len(asked) != 1 || asked[0] != "Which one?" {
				t.Errorf("the client was asked %q", asked)
			}
			if len(h.core.Questions().Pending()) != 0 {
				t.Error("question left pending")
			}
		})
	}

	t.Run("hidden member", func(t *testing.T) {
		hidden := h.token("hidden")
		if err := h.core.Clients().SetAgents(ctx, "hidden", false, []string{"lead"}); err != nil {
			t.Fatal(err)
		}
		c := connect(t, h.URL, eras[1], hidden)
		res := call(t, c, "lead", map[string]any{"message": "the answer"}, nil)
		if got, want := firstText(res), `lead says: error: there is no tool named "agent_researcher"`; res.IsError || got != want {
			t.Errorf("answer = %q (error %v), want %q", got, res.IsError, want)
		}
	})
}

func clientID(t *testing.T, h *harness, name string) string {
	t.Helper()
	for _, c := range h.core.Clients().List() {
		if c.Name == name && c.Active() {
			return c.ID
		}
	}
	t.Fatalf("no client %s", name)
	return ""
}
