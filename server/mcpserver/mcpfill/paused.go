package mcpfill

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// On the 2026-07-28 era a request to the client cannot travel on the
// call: the call returns an InputRequiredResult and the client answers
// with a new call. mcp-go would run the tool again from the start; here
// the work is not replayed: it stays parked, mid-flight, and the retry
// resumes it.

// PersonError makes an error whose message is for a person: work
// cancelled with one reports that message (mcpserver makes the core's
// *agent.UserError).
type PersonError func(msg string) error

// ParkedTurn is a modern-era call's work whose calls come and go.
type ParkedTurn struct {
	id        string
	workID    string // the caller's id of the work
	principal string
	cancel    context.CancelCauseFunc
	asks      chan *inputRound         // what the work needs from the client
	done      chan *mcp.CallToolResult // buffered: the work's result
	samples   atomic.Int64             // sampling requests made, for their keys

	mu     sync.Mutex
	rounds int         // rounds handed to the client so far
	held   *inputRound // the round out with the client
	label  string      // what the work belongs to (Holds)
	// deadline: a pause unattended past it is swept.
	deadline time.Time
	expiry   *time.Timer // sweeps at the deadline
}

// WorkID is the id the caller gave the work (Start).
func (t *ParkedTurn) WorkID() string { return t.workID }

// inputRound is what work needs from the client at one point: input
// requests (elicitation, sampling) by key, answered together. A retry, or
// a tasks/update, may answer some keys only; the rest are asked again.
type inputRound struct {
	seq      int
	requests mcp.InputRequests
	got      mcp.InputResponses      // answers so far
	reply    chan mcp.InputResponses // buffered: the complete answers
}

func newInputRound(requests mcp.InputRequests) *inputRound {
	return &inputRound{requests: requests, got: make(mcp.InputResponses), reply: make(chan mcp.InputResponses, 1)}
}

// answer takes the responses to what was asked; complete reports whether
// every request is answered now.
func (r *inputRound) answer(responses mcp.InputResponses) (complete bool) {
	for k, v := range responses {
		if _, asked := r.requests[k]; asked {
			r.got[k] = v
		}
	}
	return len(r.missing()) == 0
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

// PausedTurns holds the parked turns, each in one of slots, which
// unfinished tasks share (WaitRefusal).
type PausedTurns struct {
	sealer  *Sealer
	slots   *Quota
	expired error       // the cause of a turn whose pause expired
	refused PersonError // the cause of a turn refused for a limit
	ttl     time.Duration
	now     func() time.Time

	mu    sync.Mutex
	turns map[string]*ParkedTurn
}

// NewPausedTurns holds turns within slots; their requestState is sealed
// by sealer, whose TTL and clock they expire by. A turn whose client
// never comes back is cancelled with expired; one refused for a limit,
// with an error refused makes.
func NewPausedTurns(sealer *Sealer, slots *Quota, expired error, refused PersonError) *PausedTurns {
	return &PausedTurns{sealer: sealer, slots: slots, expired: expired, refused: refused,
		ttl: sealer.TTL(), now: sealer.Now, turns: make(map[string]*ParkedTurn)}
}

// park registers a turn that has a question out, unless its client's
// share or the total is used up.
func (p *PausedTurns) park(t *ParkedTurn) LimitHit {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	if _, ok := p.turns[t.id]; ok {
		return WithinLimits
	}
	if hit := p.slots.Take(t.principal); hit != WithinLimits {
		return hit
	}
	p.turns[t.id] = t
	return WithinLimits
}

// Get finds a parked turn by its id (Claims.Turn); nil when it ended,
// expired, or never was.
func (p *PausedTurns) Get(id string) *ParkedTurn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
	return p.turns[id]
}

func (p *PausedTurns) drop(t *ParkedTurn) {
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
func (p *PausedTurns) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepLocked()
}

// Holds reports whether a parked turn with this label (Elicit) waits for
// its client's answer.
func (p *PausedTurns) Holds(label string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.turns {
		t.mu.Lock()
		held := t.label == label && t.held != nil
		t.mu.Unlock()
		if held {
			return true
		}
	}
	return false
}

// sweepLocked ends turns left unattended past their deadline.
func (p *PausedTurns) sweepLocked() {
	now := p.now()
	for id, t := range p.turns {
		t.mu.Lock()
		expired := !t.deadline.IsZero() && now.After(t.deadline)
		t.mu.Unlock()
		if expired {
			t.cancel(p.expired)
			delete(p.turns, id)
			p.slots.Give(t.principal)
		}
	}
}

// handOut gives input requests to whichever call of the client waits on
// the turn, and waits for the client's answers.
func (t *ParkedTurn) handOut(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	r := newInputRound(requests)
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

// Elicit asks the client's user through the turn, under key, and labels
// the turn (Holds).
func (t *ParkedTurn) Elicit(ctx context.Context, label, key string, params mcp.ElicitationParams) (*mcp.ElicitationResult, error) {
	t.mu.Lock()
	t.label = label
	t.mu.Unlock()
	got, err := t.handOut(ctx, mcp.InputRequests{key: mcp.NewElicitationInputRequest(params)})
	if err != nil {
		return nil, err
	}
	resp := server.ElicitationResponse(got, key)
	if resp == nil {
		return nil, fmt.Errorf("the client's answer to %s is not an elicitation result", key)
	}
	return resp, nil
}

// Sampler asks the client's model through the turn; tools tells whether
// the client declared tool use in sampling.
func (t *ParkedTurn) Sampler(tools bool) Sampler { return Sampler{t: t, tools: tools} }

// Sampler is the client's model, reached through a parked turn.
type Sampler struct {
	t     *ParkedTurn
	tools bool
}

// CreateMessage asks the client's model and waits for its answer.
func (m Sampler) CreateMessage(ctx context.Context, p mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
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

// SupportsTools reports whether the client's model may be sent tools.
func (m Sampler) SupportsTools() bool { return m.tools }

// Start runs work for a new call of the principal's, as a turn that can
// be parked, and follows it as Answer does. The work's context outlives
// the call (a retry resumes it); a client that closes the call while the
// work runs cancels it. workID is the caller's, for WorkID.
func (p *PausedTurns) Start(ctx context.Context, req mcp.CallToolRequest, principal, workID string,
	work func(ctx context.Context, t *ParkedTurn) *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	t := &ParkedTurn{id: newID(), workID: workID, principal: principal, asks: make(chan *inputRound), done: make(chan *mcp.CallToolResult, 1)}
	workCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t.cancel = cancel
	go func() {
		defer cancel(nil)
		t.done <- work(workCtx, t)
	}()
	return p.wait(ctx, req, t)
}

// Answer delivers a retry's input responses to the parked turn, for the
// round seq of its verified requestState, and follows the turn until it
// asks the client again or ends. When the round was answered meanwhile
// (on the desktop) the call attaches to the turn and gets what it has now.
func (p *PausedTurns) Answer(ctx context.Context, req mcp.CallToolRequest, t *ParkedTurn, seq int) (*mcp.CallToolResult, error) {
	t.mu.Lock()
	r := t.held
	t.deadline = time.Time{} // a call waits on it again: not unattended
	if r != nil && r.seq == seq {
		if !r.answer(req.Params.InputResponses) {
			// Not all answered: ask again for the rest.
			t.deadline = p.now().Add(p.ttl)
			t.mu.Unlock()
			return p.inputRequired(req, t, r), nil
		}
		t.held = nil
		r.reply <- r.got
	}
	t.mu.Unlock()
	return p.wait(ctx, req, t)
}

// wait follows the turn until it asks the client or ends. A client that
// closes this call while the turn runs cancels the turn.
func (p *PausedTurns) wait(ctx context.Context, req mcp.CallToolRequest, t *ParkedTurn) (*mcp.CallToolResult, error) {
	select {
	case r := <-t.asks:
		t.mu.Lock()
		t.rounds++
		r.seq, t.held = t.rounds, r
		t.deadline = p.now().Add(p.ttl)
		if t.expiry != nil {
			t.expiry.Stop()
		}
		// Swept when the TTL passes, even if no other call comes by.
		t.expiry = time.AfterFunc(p.ttl+time.Millisecond, p.sweep)
		t.mu.Unlock()
		if hit := p.park(t); hit != WithinLimits {
			// Refused, and no other turn evicted: this one ends.
			t.mu.Lock()
			t.expiry.Stop()
			t.mu.Unlock()
			msg := WaitRefusal(p.slots, hit)
			t.cancel(p.refused(msg))
			<-t.done
			return mcp.NewToolResultError(msg), nil
		}
		return p.inputRequired(req, t, r), nil
	case res := <-t.done:
		p.drop(t)
		return res, nil
	case <-ctx.Done():
		t.cancel(context.Cause(ctx))
		p.drop(t)
		return nil, ctx.Err()
	}
}

// WaitRefusal says which limit on waiting work (paused turns and
// unfinished tasks, counted together in slots) was hit, and what to do.
func WaitRefusal(slots *Quota, hit LimitHit) string {
	what := fmt.Sprintf("This client already has %d turns held for it (calls paused on a question, and unfinished tasks), the most one client may hold", slots.PerClient)
	if hit == TotalLimit {
		what = fmt.Sprintf("Deskhand is already holding %d turns for its clients (calls paused on a question, and unfinished tasks), its limit for all clients together", slots.Total)
	}
	return what + ". Answer or cancel some of them (retry a paused call with its answer, or tasks/cancel a task), then call again."
}

// inputRequired hands the round's unanswered requests to the client with a
// sealed state.
func (p *PausedTurns) inputRequired(req mcp.CallToolRequest, t *ParkedTurn, r *inputRound) *mcp.CallToolResult {
	state := p.sealer.Seal(Claims{Turn: t.id, Seq: r.seq, Tool: req.Params.Name, Principal: t.principal, Args: ArgsDigest(req.Params.Arguments)})
	return &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired},
		MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: r.missing(), RequestState: state},
	}
}
