package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
)

// RunRequest is one call of an agent.
type RunRequest struct {
	Agent     string // slug
	Principal string // client ID, or LocalPrincipal
	// Conversation is the handle to continue; blank (after trimming) starts
	// a new conversation.
	Conversation string
	Message      string
	Context      string // prepended to Message
	// TurnID, when set (a UUID), names the turn, so a caller can follow it
	// (its questions in Pending, its events) before Run returns.
	TurnID string
	// parent is the turn of the agent that called this one as a team
	// member (team.go); nil for a call from a client or the desktop.
	parent *teamLink
}

// RunResult is what a finished turn produced.
type RunResult struct {
	Conversation Conversation
	// NewConversation is true when this call started the conversation.
	NewConversation bool
	Turn            Turn
	Text            string
	// Structured is the validated JSON answer of an agent with a response
	// schema (nil otherwise).
	Structured json.RawMessage
}

// Run runs one turn: the model is called, tools it asks for are run and
// their results fed back, until it answers or the round limit is hit. The
// turn is recorded whatever happens; when it fails, the error's
// UserMessage says why and the result still names the turn.
func (cv *Conversations) Run(ctx context.Context, req RunRequest) (*RunResult, error) {
	c := cv.c
	if !cv.turns.admit() {
		return nil, errShuttingDown
	}
	defer cv.turns.running.Done()
	agent, ok := c.agents.BySlug(req.Agent)
	if !ok || !agent.Enabled {
		return nil, Userf(ErrNotFound, "no enabled agent named %q", req.Agent)
	}
	if c.settings.paused.Load() {
		return nil, Userf(nil, "%s", PausedMessage)
	}
	if strings.TrimSpace(req.Message) == "" {
		return nil, Userf(nil, "'message' is empty: say what you want the agent to do")
	}
	conv, isNew, err := c.openConversation(ctx, agent, req)
	if err != nil {
		return nil, err
	}
	res := &RunResult{Conversation: conv, NewConversation: isNew}
	defer func() { cv.held.release(res.Conversation) }()

	// A shutdown ends the turn too, with its own cause.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopOnClose := context.AfterFunc(c.base, func() { cancel(context.Cause(c.base)) })
	defer stopOnClose()
	// The turn is followed (to be stopped, and waited for) until it is
	// recorded; an agent deleted meanwhile has seen it, or it sees that.
	live := &liveTurn{agentID: agent.ID, cancel: cancel, done: make(chan struct{})}
	cv.turns.track(conv.ID, live)
	defer cv.turns.untrack(conv.ID, live)
	if !c.agentExists(agent.ID) {
		return nil, Userf(ErrNotFound, "no enabled agent named %q", req.Agent)
	}

	content := req.Message
	if strings.TrimSpace(req.Context) != "" {
		content = req.Context + "\n\n" + req.Message
	}
	turnID := req.TurnID
	if _, err := uuid.Parse(turnID); err != nil {
		turnID = uuid.NewString()
	}
	turn := Turn{
		ID: turnID, ConversationID: conv.ID, AgentID: agent.ID, Principal: req.Principal,
		Status: TurnRunning, Model: agent.Model, StartedAt: c.now(),
	}
	user := Message{Role: RoleUser, Content: content, TurnID: turn.ID, CreatedAt: turn.StartedAt}
	live.progress.begin(turn.ID, agent.Slug, turn.StartedAt)
	past, kept := cv.held.history(conv.ID)
	if !isNew && !kept {
		if past, err = cv.store.Messages(ctx, conv.ID); err != nil {
			return nil, fmt.Errorf("load conversation %s: %w", conv.ID, err)
		}
	}
	// The turn's start is written while the model works: should the write
	// fail, the turn stops.
	start := TurnStart{Turn: turn, User: user}
	if isNew {
		start.NewConversation = &conv
	}
	// The watcher stops the turn should the start fail; the turn itself
	// reads the outcome once it has recorded its end, from the same
	// once, without waiting for the watcher to be scheduled.
	begun := sync.OnceValue(cv.store.BeginTurn(ctx, start))
	go func() {
		if err := begun(); err != nil {
			cancel(fmt.Errorf("record turn: %w", err))
		}
	}()
	c.publish(Event{Kind: EventTurnStarted, Agent: agent.Slug, Conversation: conv.ID, Turn: turn.ID, Text: content})

	produced, runErr := c.loop(ctx, agent, &turn, past, user, &live.progress)
	if runErr == nil {
		res.Text = lastAssistantText(produced)
		if len(agent.ResponseSchema) > 0 {
			if res.Structured, runErr = structuredAnswer(res.Text); runErr == nil {
				res.Text = string(res.Structured)
			}
		}
	}
	turn.EndedAt = c.now()
	turn.Status, runErr = c.outcome(ctx, turn.ID, runErr)
	if runErr != nil {
		runErr = c.redact.Error(runErr) // a server's error may echo a key
		turn.Error = UserMessage(runErr)
		c.log.Warn("turn ended without an answer", "agent", agent.Slug, "turn", turn.ID, "status", turn.Status, "err", runErr)
	}
	// Record even when the caller went away: the turn happened. The end is
	// queued behind the start, so the two commit together when they can.
	endErr := cv.store.EndTurn(context.WithoutCancel(ctx), turn, produced)
	live.progress.end()
	if err := begun(); err != nil {
		cv.held.keep(conv.ID, nil) // read it back next time
		return nil, fmt.Errorf("record turn %s: %w", turn.ID, err)
	}
	if endErr != nil {
		cv.held.keep(conv.ID, nil)
		return nil, fmt.Errorf("record end of turn %s: %w", turn.ID, endErr)
	}
	cv.held.keep(conv.ID, slices.Concat(past, []Message{user}, produced))
	res.Turn = turn
	res.Conversation.UpdatedAt = turn.EndedAt
	c.publish(Event{Kind: EventTurnEnded, Agent: agent.Slug, Conversation: conv.ID, Turn: turn.ID, Status: turn.Status, Text: turn.Error})
	return res, runErr
}

// outcome classifies how a turn ended and gives a cancelled turn its
// user-facing error. It reads the context once: Close may cancel it at
// any moment, and a second reading could see a cancel without its cause.
func (c *Core) outcome(ctx context.Context, turnID string, runErr error) (TurnStatus, error) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrShutdown):
		return TurnInterrupted, Userf(cause, "Deskhand shut down during turn %s; it was recorded as interrupted. Call again to retry.", turnID)
	case cause != nil:
		var ue *UserError
		if errors.As(cause, &ue) { // the canceller said why
			return TurnCancelled, ue
		}
		return TurnCancelled, Userf(cause, "turn %s was cancelled before it finished", turnID)
	case runErr != nil:
		return TurnFailed, runErr
	}
	return TurnCompleted, nil
}

// openConversation resolves the handle and marks the conversation busy.
func (c *Core) openConversation(ctx context.Context, agent Agent, req RunRequest) (Conversation, bool, error) {
	handle := strings.TrimSpace(req.Conversation)
	if handle != "" && !agent.Conversations && req.parent == nil {
		return Conversation{}, false, ErrConversationsOff
	}
	if handle == "" {
		now := c.now()
		conv := Conversation{
			ID: uuid.NewString(), AgentID: agent.ID, Principal: req.Principal,
			Title: title(req.Message), CreatedAt: now, UpdatedAt: now,
		}
		req.parent.link(&conv)
		// The conversation is written with its first turn.
		_, err := c.conversations.held.acquire(conv.ID, nil, func() (Conversation, error) { return conv, nil })
		return conv, true, err
	}
	// Only minted handles (UUIDs) can exist; anything else is unknown
	// without asking the store.
	if _, err := uuid.Parse(handle); err != nil {
		return Conversation{}, false, ErrUnknownConversation
	}
	owns := func(conv Conversation) bool {
		return conv.Principal == req.Principal && conv.AgentID == agent.ID && req.parent.continues(conv)
	}
	conv, err := c.conversations.held.acquire(handle, owns, func() (Conversation, error) {
		conv, err := c.conversations.store.Conversation(ctx, handle)
		if errors.Is(err, ErrNotFound) {
			return Conversation{}, ErrUnknownConversation
		}
		if err != nil {
			return Conversation{}, fmt.Errorf("load conversation: %w", err)
		}
		return conv, nil
	})
	return conv, false, err
}

// turnRun is one turn in progress.
type turnRun struct {
	agent Agent
	turn  *Turn
	tools map[string]agentTool
	asked int // questions asked so far
	// held are tool server tools held since their definition changed:
	// the refusal the model reads, by name (toolservers_run.go).
	held map[string]string
	// fromServers orders the questions of its tool servers, asked on
	// their goroutines, with the turn's own (toolservers_run.go).
	fromServers sync.Mutex
}

type agentTool struct {
	Tool
	needsApproval bool
}

func (c *Core) loop(ctx context.Context, agent Agent, turn *Turn, past []Message, user Message, live *liveProgress) ([]Message, error) {
	model, err := c.modelFor(ctx, agent)
	if err != nil {
		return nil, err
	}
	run := &turnRun{agent: agent, turn: turn, tools: c.agentTools(agent)}
	c.addServerTools(ctx, run)
	c.addTeamTools(ctx, run)
	specs := []ToolSpec{askUserSpec}
	for _, t := range run.tools {
		specs = append(specs, t.Spec())
	}
	slices.SortFunc(specs[1:], func(a, b ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	msgs := make([]Message, 0, len(past)+2)
	if agent.Prompt != "" {
		msgs = append(msgs, Message{Role: RoleSystem, Content: agent.Prompt})
	}
	msgs = append(append(msgs, past...), user)

	var produced []Message
	maxRounds := cmp.Or(agent.MaxRounds, DefaultMaxRounds)
	for round := 1; ; round++ {
		if round > maxRounds {
			return produced, Userf(nil, "agent %q called tools %d times without giving an answer; the turn was stopped", agent.Slug, maxRounds)
		}
		c.publish(Event{Kind: EventModelCall, Agent: agent.Slug, Conversation: turn.ConversationID, Turn: turn.ID, Text: agent.Model})
		resp, err := model.Chat(ctx, ChatRequest{Model: agent.Model, Messages: msgs, Tools: specs, Format: agent.ResponseSchema},
			func(d Delta) {
				if d.Content != "" {
					live.delta(d.Content)
					c.publish(Event{Kind: EventDelta, Agent: agent.Slug, Conversation: turn.ConversationID, Turn: turn.ID, Text: d.Content})
				}
			})
		if err != nil {
			return produced, err
		}
		turn.Model = cmp.Or(resp.Model, turn.Model)
		turn.PromptTokens += resp.PromptTokens
		turn.OutputTokens += resp.OutputTokens
		turn.Trimmed = max(turn.Trimmed, resp.Trimmed)
		reply := resp.Message
		reply.Role, reply.TurnID, reply.CreatedAt = RoleAssistant, turn.ID, c.now()
		produced = append(produced, reply)
		msgs = append(msgs, reply)
		live.roundDone(reply, resp.PromptTokens, resp.OutputTokens)
		if len(reply.ToolCalls) == 0 {
			return produced, nil
		}
		for _, call := range reply.ToolCalls {
			turn.ToolCalls++
			c.publish(Event{Kind: EventToolCall, Agent: agent.Slug, Conversation: turn.ConversationID, Turn: turn.ID, Text: call.Name})
			out, err := c.callTool(ctx, run, call)
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				return produced, err
			}
			result := Message{Role: RoleTool, Content: out, ToolCallID: call.ID, ToolName: call.Name, TurnID: turn.ID, CreatedAt: c.now()}
			produced = append(produced, result)
			msgs = append(msgs, result)
			live.toolDone(result)
		}
	}
}

func (c *Core) agentTools(agent Agent) map[string]agentTool {
	out := make(map[string]agentTool)
	for _, at := range agent.Tools {
		if t, ok := c.tools[at.Name]; ok {
			out[at.Name] = agentTool{Tool: t, needsApproval: at.NeedsApproval}
		}
	}
	return out
}

// callTool runs one tool call. What goes wrong in the tool becomes text
// for the model; an error ends the turn (nobody could answer a question,
// the turn was cancelled).
func (c *Core) callTool(ctx context.Context, run *turnRun, call ToolCall) (string, error) {
	if call.Name == askUserTool {
		return c.askUser(ctx, run, call.Arguments)
	}
	if why, held := run.held[call.Name]; held {
		return "error: " + why, nil
	}
	t, ok := run.tools[call.Name]
	if !ok {
		return fmt.Sprintf("error: there is no tool named %q", call.Name), nil
	}
	// What is approved and what runs are the same decoded arguments.
	args, err := toolArguments(t.Tool, call.Name, call.Arguments)
	if err != nil {
		return "error: " + UserMessage(err), nil
	}
	if t.needsApproval {
		call.Arguments = args
		ok, refusal, err := c.approve(ctx, run, call)
		if err != nil || !ok {
			return refusal, err
		}
	}
	out, err := t.Call(ctx, run.agent, args)
	if err != nil {
		return "error: " + UserMessage(err), nil
	}
	return out, nil
}

func lastAssistantText(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return msgs[i].Content
		}
	}
	return ""
}

// structuredAnswer checks that the model's answer is JSON; the MCP surface
// validates it against the schema.
func structuredAnswer(text string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(text)
	if !json.Valid([]byte(trimmed)) {
		return nil, Userf(nil, "the model's answer is not the JSON the agent's response schema asks for")
	}
	return json.RawMessage(trimmed), nil
}

// title is the first line of a message, shortened for lists.
func title(message string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	const max = 80
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	return string([]rune(line)[:max-1]) + "…"
}
