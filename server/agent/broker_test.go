package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
)

// askingModel calls ask_user once with the question and choices, then
// answers with what the tool returned.
func askingModel(question string, choices ...string) func(context.Context, int, agent.ChatRequest, func(agent.Delta)) (agent.ChatResponse, error) {
	return func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			return agenttest.Calls("q1", "ask_user", map[string]any{"question": question, "choices": choices}), nil
		}
		return agenttest.Text("got: " + req.Messages[len(req.Messages)-1].Content), nil
	}
}

// nextQuestion waits for the next question event.
func nextQuestion(t *testing.T, events <-chan agent.Event) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == agent.EventQuestionAsked {
				return e.Question
			}
		case <-timeout:
			t.Fatal("no question asked")
		}
	}
}

type runOutcome struct {
	res *agent.RunResult
	err error
}

func (f *fixture) runAsync(t *testing.T, ctx context.Context, msg string) <-chan runOutcome {
	out := make(chan runOutcome, 1)
	go func() {
		res, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: f.agent.Slug, Principal: "p", Message: msg})
		out <- runOutcome{res, err}
	}()
	return out
}

func TestDesktopAnswersAskUser(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	f.model.Reply = askingModel("Which colour?", "red", "blue")
	events := f.core.Events().Subscribe(t.Context())
	done := f.runAsync(t, t.Context(), "paint it")
	id := nextQuestion(t, events)

	pending := f.core.Questions().Pending()
	if len(pending) != 1 || pending[0].ID != id || pending[0].Text != "Which colour?" || pending[0].Seq != 1 || pending[0].ClientAsked {
		t.Fatalf("pending = %+v", pending)
	}
	if err := f.core.Questions().Answer(id, map[string]any{"answer": "green"}, false); err == nil {
		t.Error("an answer outside the choices was accepted")
	}
	if err := f.core.Questions().Answer(id, map[string]any{"answer": "blue"}, false); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if out.err != nil || out.res.Text != "got: blue" {
		t.Fatalf("turn: %+v %v", out.res, out.err)
	}
	if err := f.core.Questions().Answer(id, map[string]any{"answer": "red"}, false); !errors.Is(err, agent.ErrQuestionClosed) {
		t.Errorf("second answer: %v", err)
	}
	if n := len(f.model.Requests()); n != 2 {
		t.Errorf("model called %d times, want 2 (never replayed)", n)
	}
	qs, err := f.db.Questions(t.Context(), out.res.Conversation.ID)
	if err != nil || len(qs) != 1 {
		t.Fatalf("stored questions: %+v %v", qs, err)
	}
	if q := qs[0]; q.Status != agent.QuestionAnswered || q.Answer == nil || q.Answer.By != agent.ByDesktop || q.Answer.Text != "blue" || q.Answer.At.IsZero() {
		t.Errorf("stored question = %+v (answer %+v)", q, q.Answer)
	}
	if len(f.core.Questions().Pending()) != 0 {
		t.Error("question still pending")
	}
}

// fakeAsker answers as a client would, after an optional delay.
type fakeAsker struct {
	answer agent.Answer
	err    error
	delay  time.Duration
	calls  atomic.Int32
}

func (a *fakeAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	a.calls.Add(1)
	select {
	case <-time.After(a.delay):
		return a.answer, a.err
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
}

func TestClientAnswersFirst(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	f.model.Reply = askingModel("Your name?")
	asker := &fakeAsker{answer: agent.Answer{Text: "Ada"}}
	events := f.core.Events().Subscribe(t.Context(), agent.EventQuestionAsked, agent.EventQuestionClosed)
	res, err := f.core.Conversations().Run(agent.WithAsker(t.Context(), asker), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi"})
	if err != nil || res.Text != "got: Ada" {
		t.Fatalf("%+v %v", res, err)
	}
	qs, _ := f.db.Questions(t.Context(), res.Conversation.ID)
	if qs[0].Answer.By != agent.ByClient {
		t.Errorf("answered by %s", qs[0].Answer.By)
	}
	// The desktop shows a question its client was asked too only after a
	// grace, and draws the events of such questions at leisure.
	for _, kind := range []agent.EventKind{agent.EventQuestionAsked, agent.EventQuestionClosed} {
		if e := <-events; e.Kind != kind || !e.ClientAsked || e.Question != qs[0].ID {
			t.Errorf("event %s of question %s, client asked %v; want %s of %s, client asked", e.Kind, e.Question, e.ClientAsked, kind, qs[0].ID)
		}
	}
}

func TestDesktopWinsOverASlowClient(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	f.model.Reply = askingModel("Your name?")
	asker := &fakeAsker{answer: agent.Answer{Text: "from client"}, delay: time.Hour}
	events := f.core.Events().Subscribe(t.Context())
	done := make(chan runOutcome, 1)
	go func() {
		res, err := f.core.Conversations().Run(agent.WithAsker(t.Context(), asker), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi"})
		done <- runOutcome{res, err}
	}()
	id := nextQuestion(t, events)
	if pending := f.core.Questions().Pending(); len(pending) != 1 || !pending[0].ClientAsked {
		t.Errorf("pending = %+v, want the question marked as asked of the client too", pending)
	}
	if err := f.core.Questions().Answer(id, map[string]any{"answer": "from desktop"}, false); err != nil {
		t.Fatal(err)
	}
	out := <-done // returns although the client never answered
	if out.err != nil || out.res.Text != "got: from desktop" {
		t.Fatalf("%+v %v", out.res, out.err)
	}
}

func TestClientFailureFallsToTheDesktop(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	f.model.Reply = askingModel("Your name?")
	asker := &fakeAsker{err: errors.New("elicitation not supported")}
	events := f.core.Events().Subscribe(t.Context())
	done := make(chan runOutcome, 1)
	go func() {
		res, err := f.core.Conversations().Run(agent.WithAsker(t.Context(), asker), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi"})
		done <- runOutcome{res, err}
	}()
	id := nextQuestion(t, events)
	if err := f.core.Questions().Answer(id, nil, true); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if out.err != nil || out.res.Text != "got: The person declined to answer." {
		t.Fatalf("%+v %v", out.res, out.err)
	}
}

func TestNobodyToAsk(t *testing.T) {
	cases := []struct {
		name    string
		desktop bool
		routing agent.Routing
		asker   agent.Asker
		want    string
	}{
		{"no client, no desktop", false, agent.RouteClient, nil, "nobody can answer"},
		{"routing decline", true, agent.RouteDecline, &fakeAsker{answer: agent.Answer{Text: "x"}}, "ask nobody"},
		{"desktop routing, no desktop", false, agent.RouteDesktop, &fakeAsker{answer: agent.Answer{Text: "x"}}, "nobody can answer"},
		{"client fails, no desktop", false, agent.RouteClient, &fakeAsker{err: errors.New("boom")}, "could not answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, agent.Config{Desktop: c.desktop}, agent.Agent{Slug: "helper", Model: "m", Enabled: true, Routing: c.routing})
			f.model.Reply = askingModel("Your name?")
			ctx := t.Context()
			if c.asker != nil {
				ctx = agent.WithAsker(ctx, c.asker)
			}
			res, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi"})
			if err == nil || !strings.Contains(agent.UserMessage(err), c.want) || res.Turn.Status != agent.TurnFailed {
				t.Fatalf("err = %v (status %v), want a failure mentioning %q", err, res, c.want)
			}
			if len(f.core.Questions().Pending()) != 0 {
				t.Error("a question was left pending")
			}
		})
	}
}

func TestQuestionExpires(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{Slug: "helper", Model: "m", Enabled: true, QuestionTimeout: 50 * time.Millisecond})
	f.model.Reply = askingModel("Anyone?")
	res, err := f.run(t, "p", "", "hi")
	if err == nil || !strings.Contains(agent.UserMessage(err), "nobody answered") || res.Turn.Status != agent.TurnFailed {
		t.Fatalf("%v %+v", err, res)
	}
	qs, _ := f.db.Questions(t.Context(), res.Conversation.ID)
	if qs[0].Status != agent.QuestionExpired {
		t.Errorf("recorded %s", qs[0].Status)
	}
	if len(f.model.Requests()) != 1 {
		t.Error("the model was called again after nobody answered")
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	f.model.Reply = askingModel("Anyone?")
	events := f.core.Events().Subscribe(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	done := f.runAsync(t, ctx, "hi")
	id := nextQuestion(t, events)
	cancel()
	out := <-done
	if out.res.Turn.Status != agent.TurnCancelled {
		t.Errorf("turn %s", out.res.Turn.Status)
	}
	if err := f.core.Questions().Answer(id, map[string]any{"answer": "late"}, false); !errors.Is(err, agent.ErrQuestionClosed) {
		t.Errorf("late answer: %v", err)
	}
	qs, _ := f.db.Questions(t.Context(), out.res.Conversation.ID)
	if qs[0].Status != agent.QuestionCancelled {
		t.Errorf("recorded %s", qs[0].Status)
	}
}

func TestApprovals(t *testing.T) {
	for _, c := range []struct {
		name    string
		content map[string]any
		ran     bool
		want    string
	}{
		{"approved", map[string]any{"approve": true}, true, "got: written"},
		{"denied with comment", map[string]any{"approve": false, "comment": "not that file"}, false, "got: The person denied this call; it was not run. Their comment: not that file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ran atomic.Bool
			tool := agenttest.Tool{Name: "write_file", Approval: true, Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				ran.Store(true)
				return "written", nil
			}}
			f := newFixture(t, agent.Config{Desktop: true, Tools: []agent.Tool{tool}},
				agent.Agent{Slug: "helper", Model: "m", Enabled: true, Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}})
			f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
				if n == 1 {
					return agenttest.Calls("w1", "write_file", map[string]string{"path": "a.txt"}), nil
				}
				return agenttest.Text("got: " + req.Messages[len(req.Messages)-1].Content), nil
			}
			events := f.core.Events().Subscribe(t.Context())
			done := f.runAsync(t, t.Context(), "write it")
			id := nextQuestion(t, events)
			q := f.core.Questions().Pending()[0]
			if q.Kind != agent.KindApproval || q.Tool != "write_file" || string(q.Arguments) != `{"path":"a.txt"}` {
				t.Fatalf("approval question = %+v", q)
			}
			if err := f.core.Questions().Answer(id, map[string]any{"approve": "yes"}, false); err == nil {
				t.Error("a non-boolean approval was accepted")
			}
			if err := f.core.Questions().Answer(id, c.content, false); err != nil {
				t.Fatal(err)
			}
			out := <-done
			if out.err != nil || out.res.Text != c.want || ran.Load() != c.ran {
				t.Errorf("res %q err %v ran %v", out.res.Text, out.err, ran.Load())
			}
		})
	}
}

func TestPendingQuestionsExpireAtStart(t *testing.T) {
	f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{})
	res, err := f.run(t, "p", "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	// What a crash leaves: a question still pending.
	q := agent.Question{ID: "22222222-2222-4222-8222-222222222222", Kind: agent.KindQuestion, Agent: "helper",
		ConversationID: res.Conversation.ID, TurnID: res.Turn.ID, Principal: "p", Seq: 1, Text: "still there?",
		AskedAt: time.Now().UTC().Truncate(time.Millisecond), ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond), Status: agent.QuestionPending}
	if err := f.db.PutQuestion(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	core, err := agent.New(t.Context(), agent.Config{History: f.db})
	if err != nil {
		t.Fatal(err)
	}
	core.Close()
	qs, _ := f.db.Questions(t.Context(), res.Conversation.ID)
	if qs[0].Status != agent.QuestionExpired {
		t.Errorf("status after restart = %s", qs[0].Status)
	}
}

// TestApprovalsStayWithThePerson: a client that can answer questions
// approves tool calls only where the agent lets it; otherwise, with no
// desktop to ask, the turn fails and says who could approve.
func TestApprovalsStayWithThePerson(t *testing.T) {
	for _, tc := range []struct {
		name             string
		clientMayApprove bool
		wantErr          string
	}{
		{"default", false, `agent "helper" needs approval to run write_file, and approvals go to the person at this computer, but no Deskhand desktop is running`},
		{"client may approve", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Bool
			tool := agenttest.Tool{Name: "write_file", Approval: true, Fn: func(context.Context, json.RawMessage) (string, error) {
				ran.Store(true)
				return "written", nil
			}}
			f := newFixture(t, agent.Config{Tools: []agent.Tool{tool}}, agent.Agent{Slug: "helper", Model: "m", Enabled: true,
				Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, ClientMayApprove: tc.clientMayApprove})
			f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
				if n == 1 {
					return agenttest.Calls("w1", "write_file", map[string]string{"path": "a.txt"}), nil
				}
				return agenttest.Text("got: " + req.Messages[len(req.Messages)-1].Content), nil
			}
			asker := &fakeAsker{answer: agent.Answer{Approve: true}}
			res, err := f.core.Conversations().Run(agent.WithAsker(t.Context(), asker), agent.RunRequest{Agent: "helper", Principal: "p", Message: "write"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(agent.UserMessage(err), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if ran.Load() {
					t.Error("the tool ran without the person's approval")
				}
				return
			}
			if err != nil || res.Text != "got: written" || !ran.Load() {
				t.Errorf("res %+v err %v ran %v", res, err, ran.Load())
			}
		})
	}
}
