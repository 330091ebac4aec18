package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
)

// DefaultMaxPaused bounds the turns held waiting for a client's answer.
const DefaultMaxPaused = 256

// On the modern era a question cannot travel on the call: the call returns
// an InputRequiredResult and the client answers with a new call. The turn
// is not replayed: it stays parked here, mid-flight, and the retry resumes
// it.

// parkedTurn is a modern-era turn whose calls come and go.
type parkedTurn struct {
	id     string
	cancel context.CancelCauseFunc
	asks   chan *heldQuestion       // the turn's questions for the client
	done   chan *mcp.CallToolResult // buffered: the turn's result

	mu           sync.Mutex
	held         *heldQuestion // the question out with the client
	conversation string
	deadline     time.Time // a pause unattended past this is swept
}

type heldQuestion struct {
	q     agent.Question
	reply chan clientReply // buffered: the first reply is taken
}

type clientReply struct {
	answer agent.Answer
	err    error
}

// pausedTurns holds the parked turns, at most max of them.
type pausedTurns struct {
	mu    sync.Mutex
	turns map[string]*parkedTurn
	max   int
	ttl   time.Duration
	now   func() time.Time
}

// park registers a turn that has a question out; false when full.
func (p *pausedTurns) park(t *parkedTurn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	if _, ok := p.turns[t.id]; ok {
		return true
	}
	if len(p.turns) >= p.max {
		return false
	}
	p.turns[t.id] = t
	return true
}

func (p *pausedTurns) get(id string) *parkedTurn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	return p.turns[id]
}

func (p *pausedTurns) drop(t *parkedTurn) {
	p.mu.Lock()
	delete(p.turns, t.id)
	p.mu.Unlock()
}

// holdsConversation reports whether a parked turn waits in the conversation.
func (p *pausedTurns) holdsConversation(conv string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.turns {
		t.mu.Lock()
		held := t.conversation == conv && t.held != nil
		t.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}

// errPauseExpired ends a turn whose client never came back.
var errPauseExpired = &agent.UserError{Msg: "nobody answered the question before the paused turn expired; the turn was stopped"}

// sweepLocked ends turns left unattended past their deadline; the core
// records them.
func (p *pausedTurns) sweepLocked() {
	now := p.now()
	for id, t := range p.turns {
		t.mu.Lock()
		expired := !t.deadline.IsZero() && now.After(t.deadline)
		t.mu.Unlock()
		if expired {
			t.cancel(errPauseExpired)
			delete(p.turns, id)
		}
	}
}

// mrtrAsker hands the turn's questions to whichever call of the client is
// waiting on the turn.
type mrtrAsker struct{ t *parkedTurn }

func (a mrtrAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	hq := &heldQuestion{q: q, reply: make(chan clientReply, 1)}
	select {
	case a.t.asks <- hq:
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
	select {
	case r := <-hq.reply:
		return r.answer, r.err
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
}

func questionKey(seq int) string { return fmt.Sprintf("q%d", seq) }

// callModern runs a modern-era call: a new turn, or the resumption of a
// parked one named by a verified requestState.
func (s *Server) callModern(ctx context.Context, req mcp.CallToolRequest, a agent.Agent, run agent.RunRequest) (*mcp.CallToolResult, error) {
	claims, resumed := claimsFrom(ctx)
	if !resumed {
		t := &parkedTurn{id: newID(), asks: make(chan *heldQuestion), done: make(chan *mcp.CallToolResult, 1)}
		turnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		t.cancel = cancel
		if clientCaps(ctx).Elicitation != nil {
			turnCtx = agent.WithAsker(turnCtx, mrtrAsker{t})
		}
		go func() {
			defer cancel(nil)
			res, err := s.core.Run(turnCtx, run)
			t.done <- s.finish(a, run.Conversation, res, err)
		}()
		return s.wait(ctx, req, t)
	}

	t := s.paused.get(claims.Turn)
	if t == nil {
		return mcp.NewToolResultError("this paused turn no longer exists (Deskhand restarted, or the turn ended or expired); call again without requestState to start over"), nil
	}
	t.mu.Lock()
	hq := t.held
	t.mu.Unlock()
	if hq != nil && hq.q.Seq == claims.Seq {
		resp := server.ElicitationResponse(req.Params.InputResponses, questionKey(claims.Seq))
		if resp == nil {
			// Nothing answered: put the same question again.
			return s.inputRequired(req, t, hq), nil
		}
		ans, err := answerFrom(hq.q, resp.ElicitationResponse)
		hq.reply <- clientReply{answer: ans, err: err}
	}
	// Otherwise the desktop answered first: this call attaches to the turn
	// and gets what it has now.
	return s.wait(ctx, req, t)
}

// wait follows the turn until it asks the client or ends. A client that
// closes this call while the turn runs cancels the turn.
func (s *Server) wait(ctx context.Context, req mcp.CallToolRequest, t *parkedTurn) (*mcp.CallToolResult, error) {
	select {
	case hq := <-t.asks:
		t.mu.Lock()
		t.held, t.conversation = hq, hq.q.ConversationID
		t.deadline = s.paused.now().Add(s.paused.ttl)
		t.mu.Unlock()
		if !s.paused.park(t) {
			t.cancel(errTooManyPaused)
			<-t.done
			return mcp.NewToolResultError(errTooManyPaused.Msg), nil
		}
		return s.inputRequired(req, t, hq), nil
	case res := <-t.done:
		s.paused.drop(t)
		return res, nil
	case <-ctx.Done():
		t.cancel(context.Cause(ctx))
		s.paused.drop(t)
		return nil, ctx.Err()
	}
}

var errTooManyPaused = &agent.UserError{Msg: fmt.Sprintf("Deskhand is already holding %d turns that wait for answers; answer or abandon some of them, then call again", DefaultMaxPaused)}

// inputRequired returns the question to the client with a sealed state.
func (s *Server) inputRequired(req mcp.CallToolRequest, t *parkedTurn, hq *heldQuestion) *mcp.CallToolResult {
	state := s.sealer.seal(stateClaims{Turn: t.id, Seq: hq.q.Seq, Tool: req.Params.Name, Principal: hq.q.Principal})
	return server.NewInputRequestBuilder(state).Elicit(questionKey(hq.q.Seq), mcp.ElicitationParams{
		Mode:            mcp.ElicitationModeForm,
		Message:         hq.q.Prompt(),
		RequestedSchema: hq.q.Schema(),
	}).ToolResult()
}
