package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
)

// TestRunsRacingClose: calls arriving while the core closes are either
// refused with the shutdown error or run and recorded; none is lost, and
// the core does not trip over its own wait (run under -race).
func TestRunsRacingClose(t *testing.T) {
	for round := range 20 {
		f := newFixture(t, agent.Config{}, agent.Agent{})
		const calls = 32
		type outcome struct {
			res *agent.RunResult
			err error
		}
		out := make(chan outcome, calls)
		var ready, start sync.WaitGroup
		ready.Add(calls + 1)
		start.Add(1)
		var wg sync.WaitGroup
		for range calls {
			wg.Go(func() {
				ready.Done()
				start.Wait()
				res, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi"})
				out <- outcome{res, err}
			})
		}
		wg.Go(func() {
			ready.Done()
			start.Wait()
			f.core.Close()
		})
		ready.Wait()
		start.Done()
		wg.Wait()
		close(out)
		refused, recorded := 0, 0
		for o := range out {
			switch {
			case o.res == nil && errors.Is(o.err, agent.ErrShutdown):
				refused++
			case o.res != nil && (o.err == nil || errors.Is(o.err, agent.ErrShutdown)):
				turns, err := f.db.Turns(context.Background(), o.res.Conversation.ID)
				if err != nil || len(turns) != 1 || turns[0].Status == agent.TurnRunning {
					t.Errorf("round %d: turn %s recorded as %+v (%v)", round, o.res.Turn.ID, turns, err)
				}
				recorded++
			default:
				t.Errorf("round %d: Run = %+v, %v; want refused with ErrShutdown or recorded", round, o.res, o.err)
			}
		}
		if refused+recorded != calls {
			t.Errorf("round %d: %d refused + %d recorded, want %d", round, refused, recorded, calls)
		}
	}
}

// TestCloseRefusesNewTurnsFirst: once Close has begun, while it waits for
// the turns already running, a new call is refused with the shutdown error
// and nothing of it is recorded; the running turn ends recorded.
func TestCloseRefusesNewTurnsFirst(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started, stopping, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var unblock sync.Once
	letGo := func() { unblock.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the fixture's Close, should the test stop early
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n > 1 {
			return agenttest.Text("a turn that should not have started"), nil
		}
		close(started)
		<-ctx.Done() // Close has begun
		close(stopping)
		<-release // and it waits for this turn
		return agent.ChatResponse{}, ctx.Err()
	}
	first := make(chan error, 1)
	go func() { _, err := f.run(t, "p", "", "slow"); first <- err }()
	<-started
	closed := make(chan struct{})
	go func() { defer close(closed); f.core.Close() }()
	<-stopping

	refused := func(when string) {
		res, err := f.run(t, "p", "", "too late")
		if res != nil || !errors.Is(err, agent.ErrShutdown) || !strings.Contains(agent.UserMessage(err), "shutting down") {
			t.Errorf("a call %s = %+v, %v; want refused with ErrShutdown", when, res, err)
		}
	}
	refused("while Close waits")
	select {
	case <-closed:
		t.Fatal("Close returned before the running turn ended")
	default:
	}
	letGo()
	<-closed
	if err := <-first; !errors.Is(err, agent.ErrShutdown) {
		t.Errorf("the running turn ended with %v, want interrupted", err)
	}
	refused("after Close")
	recent, err := f.db.RecentConversations(t.Context(), 10)
	if err != nil || len(recent) != 1 || recent[0].LastStatus != agent.TurnInterrupted {
		t.Errorf("conversations = %+v, %v; want the one interrupted turn", recent, err)
	}
}
