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
	id        string
	principal string
	cancel    context.CancelCauseFunc
	asks      chan *heldRequest        // what the turn needs from the client
	done      chan *mcp.CallToolResult // buffered: the turn's result

	mu           sync.Mutex
	seq          int          // requests handed to the client so far
	held         *heldRequest // the request out with the client
	conversation string
	deadline     time.Time // a pause unattended past this is swept
}

// heldRequest is a question for the client's user, or a completion from
// the client's model (sampling).
type heldRequest struct {
	seq      int
	question *agent.Question
	sample   *mcp.CreateMessageParams
	reply    chan clientReply // buffered: the first reply is taken
}

func (h *heldRequest) key() string {
	if h.sample != nil {
		return fmt.Sprintf("s%d", h.seq)
	}
	return fmt.Sprintf("q%d", h.seq)
}

type clientReply struct {
	answer     agent.Answer
	completion *mcp.CreateMessageResult
	err        error
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

// handOut gives a request to whichever call of the client waits on the
// turn, and waits for the client's reply.
func (t *parkedTurn) handOut(ctx context.Context, h *heldRequest) (clientReply, error) {
	select {
	case t.asks <- h:
	case <-ctx.Done():
		return clientReply{}, ctx.Err()
	}
	select {
	case r := <-h.reply:
		return r, r.err
	case <-ctx.Done():
		return clientReply{}, ctx.Err()
	}
}

// mrtrAsker asks the client's user through the parked turn.
type mrtrAsker struct{ t *parkedTurn }

func (a mrtrAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	r, err := a.t.handOut(ctx, &heldRequest{question: &q, reply: make(chan clientReply, 1)})
	return r.answer, err
}

// mrtrSampler asks the client's model through the parked turn.
type mrtrSampler struct {
	t     *parkedTurn
	tools bool
}

func (m mrtrSampler) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, err := m.t.handOut(ctx, &heldRequest{sample: &p, reply: make(chan clientReply, 1)})
	return r.completion, err
}

func (m mrtrSampler) SupportsTools() bool { return m.tools }

// callModern runs a modern-era call: a new turn, or the resumption of a
// parked one named by a verified requestState.
func (s *Server) callModern(ctx context.Context, req mcp.CallToolRequest, a agent.Agent, run agent.RunRequest) (*mcp.CallToolResult, error) {
	claims, resumed := claimsFrom(ctx)
	if !resumed {
		t := &parkedTurn{id: newID(), principal: run.Principal, asks: make(chan *heldRequest), done: make(chan *mcp.CallToolResult, 1)}
		turnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		t.cancel = cancel
		caps := clientCaps(ctx)
		if caps.Elicitation != nil {
			turnCtx = agent.WithAsker(turnCtx, mrtrAsker{t})
		}
		if caps.Sampling != nil {
			turnCtx = agent.WithClientModel(turnCtx, mrtrSampler{t: t, tools: caps.Sampling.Tools != nil})
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
	h := t.held
	t.deadline = time.Time{} // a call waits on it again: not unattended
	t.mu.Unlock()
	if h != nil && h.seq == claims.Seq {
		reply, answered := replyFrom(h, req.Params.InputResponses)
		if !answered {
			// Nothing answered: put the same request again.
			t.mu.Lock()
			t.deadline = s.paused.now().Add(s.paused.ttl)
			t.mu.Unlock()
			return s.inputRequired(req, t, h), nil
		}
		h.reply <- reply
	}
	// Otherwise the desktop answered first: this call attaches to the turn
	// and gets what it has now.
	return s.wait(ctx, req, t)
}

// wait follows the turn until it asks the client or ends. A client that
// closes this call while the turn runs cancels the turn.
func (s *Server) wait(ctx context.Context, req mcp.CallToolRequest, t *parkedTurn) (*mcp.CallToolResult, error) {
	select {
	case h := <-t.asks:
		t.mu.Lock()
		t.seq++
		h.seq, t.held = t.seq, h
		if h.question != nil {
			t.conversation = h.question.ConversationID
		}
		t.deadline = s.paused.now().Add(s.paused.ttl)
		t.mu.Unlock()
		if !s.paused.park(t) {
			full := &agent.UserError{Msg: fmt.Sprintf("Deskhand is already holding %d turns that wait for answers; answer or abandon some of them, then call again", s.paused.max)}
			t.cancel(full)
			<-t.done
			return mcp.NewToolResultError(full.Msg), nil
		}
		return s.inputRequired(req, t, h), nil
	case res := <-t.done:
		s.paused.drop(t)
		return res, nil
	case <-ctx.Done():
		t.cancel(context.Cause(ctx))
		s.paused.drop(t)
		return nil, ctx.Err()
	}
}

// inputRequired hands the request to the client with a sealed state.
func (s *Server) inputRequired(req mcp.CallToolRequest, t *parkedTurn, h *heldRequest) *mcp.CallToolResult {
	state := s.sealer.seal(stateClaims{Turn: t.id, Seq: h.seq, Tool: req.Params.Name, Principal: t.principal})
	b := server.NewInputRequestBuilder(state)
	if h.sample != nil {
		b.Sample(h.key(), *h.sample)
	} else {
		b.Elicit(h.key(), mcp.ElicitationParams{
			Mode:            mcp.ElicitationModeForm,
			Message:         h.question.Prompt(),
			RequestedSchema: h.question.Schema(),
		})
	}
	return b.ToolResult()
}

// replyFrom reads the client's reply to h from a retry's inputResponses.
func replyFrom(h *heldRequest, responses mcp.InputResponses) (clientReply, bool) {
	if h.sample != nil {
		res := server.SamplingResponse(responses, h.key())
		if res == nil {
			return clientReply{}, false
		}
		return clientReply{completion: res}, true
	}
	resp := server.ElicitationResponse(responses, h.key())
	if resp == nil {
		return clientReply{}, false
	}
	ans, err := answerFrom(*h.question, resp.ElicitationResponse)
	return clientReply{answer: ans, err: err}, true
}
