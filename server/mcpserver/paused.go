package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// On the modern era a question cannot travel on the call: the call returns
// an InputRequiredResult and the client answers with a new call. The turn
// is not replayed: it stays parked here, mid-flight, and the retry resumes
// it.

// parkedTurn is a modern-era turn whose calls come and go.
type parkedTurn struct {
	id        string
	turnID    string // the core's turn, whose events become progress
	principal string
	cancel    context.CancelCauseFunc
	asks      chan *inputRound         // what the turn needs from the client
	done      chan *mcp.CallToolResult // buffered: the turn's result
	samples   atomic.Int64             // sampling requests made, for their keys

	mu           sync.Mutex
	rounds       int         // rounds handed to the client so far
	held         *inputRound // the round out with the client
	conversation string
	deadline     time.Time   // a pause unattended past this is swept
	expiry       *time.Timer // sweeps at the deadline
}

// inputRound is what a turn needs from the client at one point: input
// requests (elicitation, sampling) by key, answered together. A retry may
// answer some keys only; the rest are asked again.
type inputRound struct {
	seq      int
	requests mcp.InputRequests
	got      mcp.InputResponses      // answers so far
	reply    chan mcp.InputResponses // buffered: the complete answers
}

// missing is what the client has not answered yet.
func (r *inputRound) missing() mcp.InputRequests {
	out := make(mcp.InputRequests, len(r.requests))
	for k, v := range r.requests {
		if _, ok := r.got[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// pausedTurns holds the parked turns, each in one of slots, which
// unfinished tasks share (Server.waits).
type pausedTurns struct {
	mu    sync.Mutex
	turns map[string]*parkedTurn
	slots *mcpfill.Quota
	ttl   time.Duration
	now   func() time.Time
}

// park registers a turn that has a question out, unless its client's
// share or the total is used up.
func (p *pausedTurns) park(t *parkedTurn) mcpfill.LimitHit {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	if _, ok := p.turns[t.id]; ok {
		return mcpfill.WithinLimits
	}
	if hit := p.slots.Take(t.principal); hit != mcpfill.WithinLimits {
		return hit
	}
	p.turns[t.id] = t
	return mcpfill.WithinLimits
}

func (p *pausedTurns) get(id string) *parkedTurn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	return p.turns[id]
}

func (p *pausedTurns) drop(t *parkedTurn) {
	p.mu.Lock()
	if _, ok := p.turns[t.id]; ok {
		delete(p.turns, t.id)
		p.slots.Give(t.principal)
	}
	p.mu.Unlock()
	t.mu.Lock()
	if t.expiry != nil {
		t.expiry.Stop()
	}
	t.mu.Unlock()
}

// sweep ends the turns whose pause expired.
func (p *pausedTurns) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
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
			p.slots.Give(t.principal)
		}
	}
}

// handOut gives input requests to whichever call of the client waits on
// the turn, and waits for the client's answers.
func (t *parkedTurn) handOut(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	r := &inputRound{requests: requests, got: make(mcp.InputResponses), reply: make(chan mcp.InputResponses, 1)}
	select {
	case t.asks <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case got := <-r.reply:
		return got, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// mrtrAsker asks the client's user through the parked turn.
type mrtrAsker struct{ t *parkedTurn }

func (a mrtrAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	a.t.mu.Lock()
	a.t.conversation = q.ConversationID
	a.t.mu.Unlock()
	key := fmt.Sprintf("q%d", q.Seq)
	got, err := a.t.handOut(ctx, mcp.InputRequests{key: mcp.NewElicitationInputRequest(elicitation(q))})
	if err != nil {
		return agent.Answer{}, err
	}
	resp := server.ElicitationResponse(got, key)
	if resp == nil {
		return agent.Answer{}, fmt.Errorf("the client's answer to %s is not an elicitation result", key)
	}
	return answerFrom(q, resp.ElicitationResponse)
}

// mrtrSampler asks the client's model through the parked turn.
type mrtrSampler struct {
	t     *parkedTurn
	tools bool
}

func (m mrtrSampler) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	key := fmt.Sprintf("s%d", m.t.samples.Add(1))
	got, err := m.t.handOut(ctx, mcp.InputRequests{key: mcp.NewSamplingInputRequest(p)})
	if err != nil {
		return nil, err
	}
	res := server.SamplingResponse(got, key)
	if res == nil {
		return nil, fmt.Errorf("the client's answer to %s is not a sampling result", key)
	}
	return res, nil
}

func (m mrtrSampler) SupportsTools() bool { return m.tools }

// elicitation is the form a question is put in.
func elicitation(q agent.Question) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: q.Prompt(), RequestedSchema: q.Schema()}
}

// callModern runs a modern-era call: a new turn, or the resumption of a
// parked one named by a verified requestState.
func (s *Server) callModern(ctx context.Context, req mcp.CallToolRequest, a agent.Agent, run agent.RunRequest) (*mcp.CallToolResult, error) {
	claims, resumed := mcpfill.ClaimsFrom(ctx)
	if !resumed {
		t := &parkedTurn{id: newID(), turnID: run.TurnID, principal: run.Principal, asks: make(chan *inputRound), done: make(chan *mcp.CallToolResult, 1)}
		defer s.followProgress(ctx, progressToken(req), t.turnID)()
		turnCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		t.cancel = cancel
		caps := mcpfill.ClientCapabilities(ctx)
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

	// The retry passed every check (mcp-go's of its headers, ours of its
	// arguments): its state is used now, and not before.
	mcpfill.KeepState(ctx)
	t := s.paused.get(claims.Turn)
	if t == nil {
		return mcp.NewToolResultError("this paused turn no longer exists (Deskhand restarted, or the turn ended or expired); call again without requestState to start over"), nil
	}
	defer s.followProgress(ctx, progressToken(req), t.turnID)()
	t.mu.Lock()
	r := t.held
	t.deadline = time.Time{} // a call waits on it again: not unattended
	if r != nil && r.seq == claims.Seq {
		for k, v := range req.Params.InputResponses {
			if _, asked := r.requests[k]; asked {
				r.got[k] = v
			}
		}
		if len(r.missing()) > 0 {
			// Not all answered: ask again for the rest.
			t.deadline = s.paused.now().Add(s.paused.ttl)
			t.mu.Unlock()
			return s.inputRequired(req, t, r), nil
		}
		t.held = nil
		r.reply <- r.got
	}
	t.mu.Unlock()
	// Otherwise the desktop answered first: this call attaches to the turn
	// and gets what it has now.
	return s.wait(ctx, req, t)
}

// wait follows the turn until it asks the client or ends. A client that
// closes this call while the turn runs cancels the turn.
func (s *Server) wait(ctx context.Context, req mcp.CallToolRequest, t *parkedTurn) (*mcp.CallToolResult, error) {
	select {
	case r := <-t.asks:
		t.mu.Lock()
		t.rounds++
		r.seq, t.held = t.rounds, r
		t.deadline = s.paused.now().Add(s.paused.ttl)
		if t.expiry != nil {
			t.expiry.Stop()
		}
		// Swept when the TTL passes, even if no other call comes by.
		t.expiry = time.AfterFunc(s.paused.ttl+time.Millisecond, s.paused.sweep)
		t.mu.Unlock()
		if hit := s.paused.park(t); hit != mcpfill.WithinLimits {
			// Refused, and no other turn evicted: this one ends.
			t.mu.Lock()
			t.expiry.Stop()
			t.mu.Unlock()
			full := &agent.UserError{Msg: s.waitRefusal(hit)}
			t.cancel(full)
			<-t.done
			return mcp.NewToolResultError(full.Msg), nil
		}
		return s.inputRequired(req, t, r), nil
	case res := <-t.done:
		s.paused.drop(t)
		return res, nil
	case <-ctx.Done():
		t.cancel(context.Cause(ctx))
		s.paused.drop(t)
		return nil, ctx.Err()
	}
}

// waitRefusal says which limit on waiting turns was hit, and what to do.
func (s *Server) waitRefusal(hit mcpfill.LimitHit) string {
	what := fmt.Sprintf("This client already has %d turns held for it (calls paused on a question, and unfinished tasks), the most one client may hold", s.waits.PerClient)
	if hit == mcpfill.TotalLimit {
		what = fmt.Sprintf("Deskhand is already holding %d turns for its clients (calls paused on a question, and unfinished tasks), its limit for all clients together", s.waits.Total)
	}
	return what + ". Answer or cancel some of them (retry a paused call with its answer, or tasks/cancel a task), then call again."
}

// inputRequired hands the round's unanswered requests to the client with a
// sealed state.
func (s *Server) inputRequired(req mcp.CallToolRequest, t *parkedTurn, r *inputRound) *mcp.CallToolResult {
	state := s.sealer.Seal(mcpfill.Claims{Turn: t.id, Seq: r.seq, Tool: req.Params.Name, Principal: t.principal, Args: mcpfill.ArgsDigest(req.Params.Arguments)})
	return &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired},
		MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: r.missing(), RequestState: state},
	}
}
