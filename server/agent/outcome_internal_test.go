package agent

import (
	"context"
	"testing"
)

// shutdownMidRead is a turn's context that Close cancels between two
// reads: its first Err is nil, every later one says Deskhand shut down.
type shutdownMidRead struct {
	context.Context
	reads int
}

func (c *shutdownMidRead) Err() error {
	c.reads++
	if c.reads == 1 {
		return nil
	}
	return ErrShutdown
}

// TestOutcomeReadsTheContextOnce: a shutdown landing while the outcome is
// read makes the turn completed or interrupted, never "cancelled" with no
// cause (the race TestRunsRacingClose once caught).
func TestOutcomeReadsTheContextOnce(t *testing.T) {
	c := &Core{}
	ctx := &shutdownMidRead{Context: context.Background()}
	status, err := c.outcome(ctx, "t1", nil)
	if status != TurnCompleted && status != TurnInterrupted {
		t.Errorf("outcome = %s, %v; want completed or interrupted", status, err)
	}
}
