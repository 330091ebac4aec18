package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Asker asks the calling client's user: the MCP surface puts one in the
// call's context (WithAsker) when the client can answer (it declared
// elicitation). Ask blocks until the person answers (a decline is an
// answer) or ctx ends, and must return when ctx ends.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

type askerKey struct{}

// WithAsker returns a context whose turns may ask the client through a.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

func askerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// Errors of the question broker.
var (
	// ErrQuestionClosed: the question was already answered, declined,
	// expired or cancelled; a second answer is refused.
	ErrQuestionClosed = &UserError{Msg: "this question is no longer open: it was already answered, declined, or it expired"}
	// ErrNobodyToAsk: the turn needs a person and nobody can answer.
	ErrNobodyToAsk = errors.New("nobody can answer")
)

// broker holds the questions waiting for a person.
// Questions are the questions and approvals waiting for a person.
type Questions struct {
	c     *Core
	store QuestionStore
	broker
}

type broker struct {
	mu      sync.Mutex
	pending map[string]*waiting
}

type waiting struct {
	q      Question
	answer chan Answer // buffered 1: the first answer wins
}

// resolve delivers the first answer to a pending question; later ones get
// ErrQuestionClosed.
func (b *broker) resolve(id string, a Answer) (Question, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.pending[id]
	if !ok {
		return Question{}, ErrQuestionClosed
	}
	delete(b.pending, id)
	w.answer <- a
	return w.q, nil
}

// withdraw closes a question that nobody answered; false if an answer
// came first.
func (b *broker) withdraw(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[id]
	delete(b.pending, id)
	return ok
}

// Pending lists the questions waiting for an answer, oldest first.
func (qs *Questions) Pending() []Question {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	out := make([]Question, 0, len(qs.pending))
	for _, w := range qs.pending {
		out = append(out, w.q)
	}
	slices.SortFunc(out, func(a, b Question) int { return a.AskedAt.Compare(b.AskedAt) })
	return out
}

// Answer answers a pending question from the desktop (the popup,
// or the command line when headless). The content must fit the question's
// form (see Question.ParseAnswer); a second answer gets ErrQuestionClosed.
func (qs *Questions) Answer(id string, content map[string]any, declined bool) error {
	qs.mu.Lock()
	w, ok := qs.pending[id]
	qs.mu.Unlock()
	if !ok {
		return ErrQuestionClosed
	}
	a := Answer{Declined: true, By: ByDesktop}
	if !declined {
		var err error
		if a, err = w.q.ParseAnswer(content, ByDesktop); err != nil {
			return err
		}
	}
	_, err := qs.resolve(id, a)
	return err
}

// ask puts a question to whoever the agent's routing allows and waits for
// the first answer. Every path ends with the question recorded and gone
// from Pending.
func (c *Core) ask(ctx context.Context, run *turnRun, q Question) (Answer, error) {
	agent, turn := run.agent, run.turn
	run.asked++
	now := c.now()
	q.ID = uuid.NewString()
	q.Agent, q.ConversationID, q.TurnID, q.Principal = agent.Slug, turn.ConversationID, turn.ID, turn.Principal
	q.Seq = run.asked
	q.AskedAt = now
	q.ExpiresAt = now.Add(cmp.Or(agent.QuestionTimeout, DefaultQuestionTimeout))
	q.Status = QuestionPending

	var client Asker
	desktop := c.desktop
	switch {
	case cmp.Or(agent.Routing, RouteClient) == RouteDecline:
		return Answer{}, Userf(ErrNobodyToAsk, "agent %q is set to ask nobody, and it needed a person (%s); the turn stops here", agent.Slug, q.summary())
	case q.Kind == KindApproval && !agent.ClientMayApprove:
		// A client driven by injected text could approve its own tool
		// calls: approvals stay with the person here unless they opted in.
		if !desktop {
			return Answer{}, Userf(ErrNobodyToAsk, "agent %q needs approval to run %s, and approvals go to the person at this computer, but no Deskhand desktop is running: start Deskhand (or 'deskhand serve' and answer with 'deskhand answer'), or let the calling client approve in the agent's settings", agent.Slug, q.Tool)
		}
	case agent.Routing == RouteDesktop:
	default:
		client = askerFrom(ctx)
	}
	if client == nil && !desktop {
		return Answer{}, Userf(ErrNobodyToAsk, "agent %q needed a person (%s), but nobody can answer: the calling client cannot answer questions (it did not declare elicitation) and no Deskhand desktop is running", agent.Slug, q.summary())
	}
	q.ClientAsked = client != nil
	if err := c.questions.store.PutQuestion(ctx, q); err != nil {
		return Answer{}, fmt.Errorf("record question: %w", err)
	}

	w := &waiting{q: q, answer: make(chan Answer, 1)}
	c.questions.mu.Lock()
	c.questions.pending[q.ID] = w
	c.questions.mu.Unlock()
	c.publish(Event{Kind: EventQuestionAsked, Agent: agent.Slug, Conversation: q.ConversationID, Turn: q.TurnID, Question: q.ID, Text: q.Prompt(), ClientAsked: q.ClientAsked})
	c.recordQuestion(agent, q)

	// The client is asked beside the desktop; whoever answers first wins.
	// A client's late reply after the desktop won is ignored.
	clientCtx, stopClient := context.WithCancel(ctx)
	clientFailed := make(chan error, 1)
	var clientDone sync.WaitGroup
	if client != nil {
		clientDone.Add(1)
		asked := q // the goroutine's own copy: q changes as it closes
		go func() {
			defer clientDone.Done()
			a, err := client.Ask(clientCtx, asked)
			if err != nil {
				clientFailed <- err
				return
			}
			a.By = ByClient
			_, _ = c.questions.resolve(asked.ID, a)
		}()
	}
	defer func() {
		stopClient()
		clientDone.Wait()
	}()

	timer := time.NewTimer(q.ExpiresAt.Sub(now))
	defer timer.Stop()
	var (
		answer   Answer
		answered bool
		err      error
	)
	for !answered && err == nil {
		select {
		case answer = <-w.answer:
			answered = true
		case cerr := <-clientFailed:
			if desktop {
				c.log.Info("the client could not answer; waiting for the desktop", "question", q.ID, "err", cerr)
				continue
			}
			q.Status, err = QuestionCancelled, Userf(cerr, "the calling client could not answer the question (%s), and no Deskhand desktop is running to ask instead", q.summary())
		case <-timer.C:
			q.Status, err = QuestionExpired, Userf(nil, "nobody answered the question (%s) within %s; the turn was stopped", q.summary(), q.ExpiresAt.Sub(q.AskedAt))
		case <-ctx.Done():
			q.Status, err = QuestionCancelled, ctx.Err()
		}
	}
	// Close it to late answerers; if one got in first, its answer stands.
	if err != nil && !c.questions.withdraw(q.ID) {
		answer, err = <-w.answer, nil
	}
	if err == nil {
		answer.At = c.now()
		q.Answer, q.Status = &answer, QuestionAnswered
		if answer.Declined {
			q.Status = QuestionDeclined
		}
	}
	if perr := c.questions.store.PutQuestion(context.WithoutCancel(ctx), q); perr != nil {
		c.log.Error("record the answer", "question", q.ID, "err", perr)
	}
	closed := Event{Kind: EventQuestionClosed, Agent: agent.Slug, Conversation: q.ConversationID, Turn: q.TurnID, Question: q.ID, Text: string(q.Status), ClientAsked: q.ClientAsked}
	if q.Answer != nil {
		closed.By = q.Answer.By
	}
	c.publish(closed)
	c.recordQuestion(agent, q)
	return answer, err
}

// summary is a short form of the question for messages.
func (q Question) summary() string {
	if q.Kind == KindApproval {
		return "approval to run " + q.Tool
	}
	text := strings.TrimSpace(q.Text)
	if len(text) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut-- // back to the start of the rune cut through
		}
		text = text[:cut] + "..."
	}
	return fmt.Sprintf("%q", text)
}

// askUserTool is how the model asks the person.
const askUserTool = "ask_user"

var askUserSpec = ToolSpec{
	Name:        askUserTool,
	Description: "Ask the person you are working for a question and wait for their answer. Offer choices when the answer is one of a few options.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"question":{"type":"string","description":"The question, in full."},` +
		`"choices":{"type":"array","items":{"type":"string"},"description":"Optional: the answers to choose from."}},` +
		`"required":["question"],"additionalProperties":false}`),
}

// askUser runs the ask_user tool: the model's question goes to the person
// and their answer (or decline) becomes the tool's result.
func (c *Core) askUser(ctx context.Context, run *turnRun, args json.RawMessage) (string, error) {
	var in struct {
		Question string   `json:"question"`
		Choices  []string `json:"choices"`
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := CheckArgumentKeys(askUserTool, args, []string{"question", "choices"}); err != nil {
		return "error: " + UserMessage(err), nil
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Question) == "" {
		return "error: ask_user takes {\"question\": text, \"choices\": [text, …] (optional)}", nil
	}
	q := Question{Kind: KindQuestion, Text: in.Question, Choices: in.Choices}
	a, err := c.ask(ctx, run, q)
	if err != nil {
		return "", err
	}
	return a.ForModel(q), nil
}

// approve asks whether a tool call may run. A denial is returned as the
// text the model reads instead of the tool's result.
// A call an approval rule covers runs without asking; an "always allow"
// answer adds a rule.
func (c *Core) approve(ctx context.Context, run *turnRun, call ToolCall) (bool, string, error) {
	q := Question{Kind: KindApproval, Tool: call.Name, Arguments: call.Arguments}
	scoped := false
	if t, ok := run.tools[call.Name]; ok {
		q.Scope, scoped = approvalScope(t.Tool, run.agent, call.Arguments)
		if st, ok := t.Tool.(*serverTool); ok {
			q.Text = st.approvalText(run.agent, call.Arguments)
		}
	}
	if r, ok := c.approvals.ruleFor(run.agent.ID, call.Name, run.turn.Principal, q.Scope, scoped); ok {
		c.approvedByRule(ctx, run, q, r)
		return true, "", nil
	}
	a, err := c.ask(ctx, run, q)
	if err != nil {
		return false, "", err
	}
	if a.Declined || !a.Approve {
		return false, a.ForModel(q), nil
	}
	if a.Remember != nil {
		q.Principal = run.turn.Principal
		q.Agent = run.agent.Slug
		if _, err := c.approvals.add(context.WithoutCancel(ctx), q, run.agent.ID, a); err != nil {
			c.log.Error("add the approval rule asked for", "agent", run.agent.Slug, "tool", q.Tool, "err", err)
		}
	}
	return true, "", nil
}

// QuestionStore keeps every question asked and how it was answered.
type QuestionStore interface {
	// PutQuestion inserts a question or updates its status and answer.
	PutQuestion(ctx context.Context, q Question) error
	// Questions lists a conversation's questions in the order asked.
	Questions(ctx context.Context, conversationID string) ([]Question, error)
	// ExpirePendingQuestions marks questions still pending as expired;
	// called once at start, after a crash.
	ExpirePendingQuestions(ctx context.Context, at time.Time) (int, error)
}
