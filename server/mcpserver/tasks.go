package mcpserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Agents' calls as tasks of the Tasks extension (mcpfill.Tasks): a turn
// runs as a task's work, and its questions wait for tasks/update when the
// client can answer them, else on the desktop.

var errTaskCancelled = &agent.UserError{Msg: "the client cancelled the task"}

// taskAsker puts the turn's questions on the task for tasks/update.
type taskAsker struct{ t *mcpfill.Task }

func (a taskAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	var answer agent.Answer
	err := a.t.Ask(ctx, q.ID, mcp.NewElicitationInputRequest(elicitation(q)), func(r mcp.ElicitationResponse) error {
		ans, err := answerFrom(q, r)
		if err != nil {
			return errors.New(agent.UserMessage(err))
		}
		answer = ans
		return nil
	})
	return answer, err
}

// waitingOnDesktop is the status message of a task whose turn has a
// question the client cannot answer, which waits on the desktop.
func (s *Server) waitingOnDesktop(turn string) string {
	var msg string
	for _, q := range s.core.Questions.Pending() {
		if q.TurnID == turn {
			msg = "waiting for an answer on the Deskhand desktop: " + q.Prompt()
		}
	}
	return msg
}

// agentTask runs an agent's turn as a task; its questions wait for
// tasks/update when the client can answer them.
func (s *Server) agentTask(w http.ResponseWriter, msg mcpfill.Peek, a agent.Agent, principal string) {
	if !s.tasks.Hold(w, msg, principal) {
		return
	}
	ctx, cancel := mcpfill.Context(principal)
	s.tasks.Start(w, msg, principal, a.Slug, uuid.NewString(), ctx, cancel, func(ctx context.Context, t *mcpfill.Task) *mcp.CallToolResult {
		if msg.DeclaresElicitation() {
			ctx = agent.WithAsker(ctx, taskAsker{t})
		}
		return s.runTask(ctx, t, msg, a, principal)
	})
}

// runTask is the call the task stands for; nil means a fault in Deskhand.
func (s *Server) runTask(ctx context.Context, t *mcpfill.Task, msg mcpfill.Peek, a agent.Agent, principal string) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("task panicked", "agent", a.Slug, "panic", p)
			res = nil
		}
	}()
	decoded := msg.Arguments()
	raw, ok := decoded.(map[string]any)
	if !ok && decoded != nil {
		return mcp.NewToolResultError("arguments must be a JSON object")
	}
	args, err := parseArgs(raw, a.Conversations)
	if err != nil {
		return mcp.NewToolResultError(agent.UserMessage(err))
	}
	if !args.HasConversation && a.Conversations {
		msg.MetaField(ConversationMetaKey, &args.Conversation)
	}
	run, err := s.core.Conversations.Run(ctx, agent.RunRequest{Agent: a.Slug, Principal: principal, Conversation: args.Conversation,
		Message: args.Message, Context: args.Context, TurnID: t.WorkID()})
	if err != nil && !isUserError(err) {
		s.log.Error("task failed", "agent", a.Slug, "err", err)
		return nil
	}
	return s.finish(a, args.Conversation, run, err)
}

func isUserError(err error) bool {
	var ue *agent.UserError
	return errors.As(err, &ue)
}

func (s *Server) extraTool(name string) (server.ServerTool, bool) {
	for _, t := range s.opts.ExtraTools {
		if t.Tool.Name == name {
			return t, true
		}
	}
	return server.ServerTool{}, false
}
