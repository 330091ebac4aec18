package control_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// A follower sees each row of its filter as it is recorded, and the
// server's Close ends it.
func TestFollowActivity(t *testing.T) {
	path := socketPath(t)
	core := newCore(t)
	srv := listen(t, path, core)
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	cursor, _, err := core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	subscribed := make(chan struct{})
	got := make(chan agent.ActivityRow, 8)
	errc := make(chan error, 1)
	go func() {
		errc <- c.FollowActivity(t.Context(), control.ActivityQuery{Client: "cursor"}, func() { close(subscribed) },
			func(l agent.ActivityRow) error { got <- l; return nil })
	}()
	select {
	case <-subscribed:
	case err := <-errc:
		t.Fatalf("follow: %v", err)
	}
	core.Activity().Record(agent.ActivityRow{Client: "another", Method: "tools/call", Outcome: agent.OutcomeOK})
	core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: "tools/call", Agent: "assistant", Outcome: agent.OutcomeToolError, Text: "no model"})
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case l := <-got:
		if l.ClientName != "cursor" || l.Client != cursor.ID || l.Agent != "assistant" || l.Outcome != agent.OutcomeToolError || l.Text != "no model" {
			t.Errorf("followed %+v, want cursor's tool error", l)
		}
	case <-timeout.C:
		t.Fatal("the follower saw no row")
	}
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- srv.Close(ctx)
	}()
	if err := <-errc; err != nil {
		t.Errorf("follow ended with %v, want nil at the server's close", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("close with a follower: %v", err)
	}
	select {
	case l := <-got:
		t.Errorf("followed a row of another client: %+v", l)
	default:
	}
}

func TestActivityPage(t *testing.T) {
	path := socketPath(t)
	core := newCore(t)
	listen(t, path, core)
	c, err := control.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	cursor, _, err := core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: "tools/call", Agent: "assistant", Outcome: agent.OutcomeOK})
	core.Activity().Record(agent.ActivityRow{Method: "POST", Outcome: agent.OutcomeRefused, Reason: "bad token"})
	lines, err := c.Activity(t.Context(), control.ActivityQuery{Client: "cursor"})
	if err != nil || len(lines) != 1 || lines[0].ClientName != "cursor" || lines[0].ID == 0 {
		t.Errorf("cursor's rows = %+v, %v; want its one call", lines, err)
	}
	lines, err = c.Activity(t.Context(), control.ActivityQuery{})
	if err != nil || len(lines) != 2 || lines[0].Reason != "bad token" {
		t.Errorf("all rows = %+v, %v; want the refusal first (newest), then the call", lines, err)
	}
	if _, err := c.Activity(t.Context(), control.ActivityQuery{Client: "nobody"}); err == nil || !strings.Contains(agent.UserMessage(err), `no client is named "nobody"`) {
		t.Errorf("unknown client: %v", err)
	}
}
