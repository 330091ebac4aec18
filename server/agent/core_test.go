package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fixture struct {
	core  *agent.Core
	db    *store.DB
	model *agenttest.Model
	agent agent.Agent
}

func newFixture(t *testing.T, cfg agent.Config, a agent.Agent) *fixture {
	t.Helper()
	f := &fixture{db: storetest.Open(t), model: &agenttest.Model{}}
	cfg.History = f.db
	if cfg.Models == nil {
		cfg.Models = map[agent.Backend]agent.Model{agent.BackendOllama: f.model}
	}
	core, err := agent.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	f.core = core
	if a.Slug == "" {
		a = agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true, Prompt: "be brief"}
	}
	if f.agent, err = core.Agents().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) run(t *testing.T, principal, handle, msg string) (*agent.RunResult, error) {
	t.Helper()
	return f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: f.agent.Slug, Principal: principal, Conversation: handle, Message: msg})
}

func userMessages(req agent.ChatRequest) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestRunRemembersConversation(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	first, err := f.run(t, "alice", "", "My name is Ada.")
	if err != nil {
		t.Fatal(err)
	}
	if !first.NewConversation || first.Text != "echo: My name is Ada." || first.Turn.Status != agent.TurnCompleted {
		t.Fatalf("first = %+v", first)
	}
	// Handles are random (version 4) UUIDs: unguessable, and they tell nothing.
	if id, err := uuid.Parse(first.Conversation.ID); err != nil || id.Version() != 4 {
		t.Errorf("handle %q is not a version 4 UUID (%v)", first.Conversation.ID, err)
	}
	second, err := f.run(t, "alice", first.Conversation.ID, "What is my name?")
	if err != nil {
		t.Fatal(err)
	}
	if second.NewConversation || second.Conversation.ID != first.Conversation.ID {
		t.Fatalf("second call opened another conversation: %+v", second.Conversation)
	}
	reqs := f.model.Requests()
	if diff := cmp.Diff([]string{"My name is Ada.", "What is my name?"}, userMessages(reqs[1])); diff != "" {
		t.Errorf("second model call lacks the history (-want +got):\n%s", diff)
	}
	if reqs[1].Messages[0].Role != agent.RoleSystem || reqs[1].Messages[0].Content != "be brief" {
		t.Errorf("system prompt missing: %+v", reqs[1].Messages[0])
	}
	// A blank handle starts afresh.
	third, err := f.run(t, "alice", "   ", "Who am I?")
	if err != nil {
		t.Fatal(err)
	}
	if !third.NewConversation || third.Conversation.ID == first.Conversation.ID {
		t.Fatal("blank handle did not start a new conversation")
	}
	if got := userMessages(f.model.Requests()[2]); len(got) != 1 {
		t.Errorf("fresh conversation carried history: %q", got)
	}
	turns, err := f.db.Turns(t.Context(), first.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].Status != agent.TurnCompleted || turns[0].Model != "fake" || turns[0].PromptTokens != 3 || turns[0].OutputTokens != 2 {
		t.Errorf("turns not recorded with model and tokens: %+v", turns)
	}
}

func TestContextIsPrepended(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	if _, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Message: "Summarise.", Context: "The sky is blue."}); err != nil {
		t.Fatal(err)
	}
	if got := userMessages(f.model.Requests()[0]); got[0] != "The sky is blue.\n\nSummarise." {
		t.Errorf("user message = %q", got[0])
	}
}

func TestUnknownAndForeignHandlesLookTheSame(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	other, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "other", Model: "m", Conversations: true, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := f.run(t, "alice", "", "hello")
	if err != nil {
		t.Fatal(err)
	}
	onOther, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: other.Slug, Principal: "alice", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ principal, handle string }{
		"never minted":           {"alice", "0b6c4a8e-2f7e-4c1a-9d7e-3f1c2b4a5d6e"},
		"not a uuid":             {"alice", "my-own-name"},
		"another client's":       {"mallory", mine.Conversation.ID},
		"another agent's handle": {"alice", onOther.Conversation.ID},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := f.run(t, c.principal, c.handle, "hi")
			if res != nil || !errors.Is(err, agent.ErrUnknownConversation) {
				t.Fatalf("got %+v, %v; want ErrUnknownConversation", res, err)
			}
			if agent.UserMessage(err) != agent.UserMessage(agent.ErrUnknownConversation) {
				t.Errorf("text differs: %q", agent.UserMessage(err))
			}
		})
	}
}

// blockingModel holds every Chat until release is closed.
func blockingModel(started chan<- struct{}, release <-chan struct{}) *agenttest.Model {
	return &agenttest.Model{Reply: func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		started <- struct{}{}
		select {
		case <-release:
			return agenttest.Text("done"), nil
		case <-ctx.Done():
			return agent.ChatResponse{}, ctx.Err()
		}
	}}
}

func TestOneTurnAtATime(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	first, err := f.run(t, "alice", "", "start")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}, 1), make(chan struct{})
	*f.model = *blockingModel(started, release)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := f.run(t, "alice", first.Conversation.ID, "slow"); err != nil {
			t.Error(err)
		}
	}()
	<-started
	if _, err := f.run(t, "alice", first.Conversation.ID, "again"); !errors.Is(err, agent.ErrConversationBusy) {
		t.Errorf("owner's concurrent call: %v, want ErrConversationBusy", err)
	}
	if _, err := f.run(t, "mallory", first.Conversation.ID, "peek"); !errors.Is(err, agent.ErrUnknownConversation) {
		t.Errorf("stranger's call on a busy conversation: %v, want ErrUnknownConversation", err)
	}
	close(release)
	wg.Wait()
	if _, err := f.run(t, "alice", first.Conversation.ID, "after"); err != nil {
		t.Errorf("conversation not released: %v", err)
	}
}

func TestToolLoop(t *testing.T) {
	var gotArgs string
	tool := agenttest.Tool{Name: "lookup", Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
		gotArgs = string(args)
		return "42", nil
	}}
	f := newFixture(t, agent.Config{Tools: []agent.Tool{tool}},
		agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true, Tools: []agent.AgentTool{{Name: "lookup"}}})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			if len(req.Tools) != 2 || req.Tools[0].Name != "ask_user" || req.Tools[1].Name != "lookup" {
				t.Errorf("tools offered = %+v", req.Tools)
			}
			return agenttest.Calls("c1", "lookup", map[string]string{"q": "answer"}), nil
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role != agent.RoleTool || last.Content != "42" || last.ToolCallID != "c1" || last.ToolName != "lookup" {
			t.Errorf("tool result not fed back: %+v", last)
		}
		return agenttest.Text("The answer is 42."), nil
	}
	res, err := f.run(t, "p", "", "what is it?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The answer is 42." || res.Turn.ToolCalls != 1 || gotArgs != `{"q":"answer"}` {
		t.Fatalf("res = %+v, args %s", res, gotArgs)
	}
	msgs, err := f.db.Messages(t.Context(), res.Conversation.ID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []agent.Role
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}, roles); diff != "" {
		t.Errorf("stored transcript (-want +got):\n%s", diff)
	}
}

func TestUnknownToolIsToldToTheModel(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			return agenttest.Calls("c1", "rm_rf", map[string]string{}), nil
		}
		return agenttest.Text(req.Messages[len(req.Messages)-1].Content), nil
	}
	res, err := f.run(t, "p", "", "go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, `no tool named "rm_rf"`) {
		t.Errorf("model was told %q", res.Text)
	}
}

func TestRoundLimit(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{Slug: "loopy", Model: "m", Enabled: true, MaxRounds: 3})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		return agenttest.Calls("c", "nothing", map[string]string{}), nil
	}
	res, err := f.run(t, "p", "", "go")
	if err == nil || !strings.Contains(agent.UserMessage(err), "3 times") {
		t.Fatalf("err = %v", err)
	}
	if res.Turn.Status != agent.TurnFailed || len(f.model.Requests()) != 3 {
		t.Errorf("status %s after %d calls", res.Turn.Status, len(f.model.Requests()))
	}
	turns, _ := f.db.Turns(t.Context(), res.Conversation.ID)
	if turns[0].Status != agent.TurnFailed || turns[0].Error == "" {
		t.Errorf("failure not recorded: %+v", turns[0])
	}
}

func TestModelErrorReachesTheUser(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		return agent.ChatResponse{}, agent.Userf(errors.New("dial tcp: refused"), "Ollama is not running")
	}
	res, err := f.run(t, "p", "", "hi")
	if agent.UserMessage(err) != "Ollama is not running" || res.Turn.Status != agent.TurnFailed {
		t.Fatalf("err %v, res %+v", err, res)
	}
	// The conversation stays usable after a failed turn.
	f.model.Reply = nil
	if _, err := f.run(t, "p", res.Conversation.ID, "again"); err != nil {
		t.Fatal(err)
	}
}

func TestInternalErrorsStayInTheLog(t *testing.T) {
	if got := agent.UserMessage(errors.New("sql: connection is busy at 0xdeadbeef")); strings.Contains(got, "0xdeadbeef") {
		t.Errorf("internal detail leaked: %q", got)
	}
}

func TestCancelIsRecorded(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	*f.model = *blockingModel(started, release)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	res, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: "helper", Principal: "p", Message: "slow"})
	if err == nil || res.Turn.Status != agent.TurnCancelled {
		t.Fatalf("res %+v err %v", res, err)
	}
	turns, _ := f.db.Turns(t.Context(), res.Conversation.ID)
	if turns[0].Status != agent.TurnCancelled {
		t.Errorf("recorded %s", turns[0].Status)
	}
}

func TestCloseInterruptsRunningTurns(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	*f.model = *blockingModel(started, release)
	go func() { <-started; f.core.Close() }()
	res, err := f.run(t, "p", "", "slow")
	if err == nil || res.Turn.Status != agent.TurnInterrupted || !strings.Contains(agent.UserMessage(err), res.Turn.ID) {
		t.Fatalf("res %+v err %v", res, err)
	}
	turns, _ := f.db.Turns(t.Context(), res.Conversation.ID)
	if turns[0].Status != agent.TurnInterrupted {
		t.Errorf("recorded %s", turns[0].Status)
	}
}

func TestCrashedTurnIsInterruptedAtStart(t *testing.T) {
	db := storetest.Open(t)
	model := &agenttest.Model{}
	cfg := agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}}
	core, err := agent.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := core.Agents().Save(t.Context(), agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true})
	res, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: a.Slug, Principal: "p", Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	core.Close()
	// What a crash leaves: a turn begun and never ended.
	crashed := agent.Turn{ID: "11111111-1111-4111-8111-111111111111", ConversationID: res.Conversation.ID, AgentID: a.ID, Principal: "p", Status: agent.TurnRunning, StartedAt: time.Now()}
	if err := db.BeginTurn(t.Context(), agent.TurnStart{Turn: crashed, User: agent.Message{Role: agent.RoleUser, Content: "lost?"}})(); err != nil {
		t.Fatal(err)
	}
	core, err = agent.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	turns, _ := db.Turns(t.Context(), res.Conversation.ID)
	if turns[1].Status != agent.TurnInterrupted {
		t.Fatalf("crashed turn is %s", turns[1].Status)
	}
	if _, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: a.Slug, Principal: "p", Conversation: res.Conversation.ID, Message: "two"}); err != nil {
		t.Fatalf("conversation unusable after crash: %v", err)
	}
	if got := userMessages(model.Requests()[1]); !cmp.Equal(got, []string{"one", "lost?", "two"}) {
		t.Errorf("acknowledged message lost: %q", got)
	}
}

func TestStructuredAnswer(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	f := newFixture(t, agent.Config{}, agent.Agent{Slug: "s", Model: "m", Enabled: true, ResponseSchema: schema})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if string(req.Format) != string(schema) {
			t.Errorf("format = %s", req.Format)
		}
		if n == 1 {
			return agenttest.Text(` {"n": 7} `), nil
		}
		return agenttest.Text("seven"), nil
	}
	res, err := f.run(t, "p", "", "count")
	if err != nil || string(res.Structured) != `{"n": 7}` {
		t.Fatalf("res %+v err %v", res, err)
	}
	if _, err := f.run(t, "p", "", "count"); err == nil || !strings.Contains(agent.UserMessage(err), "not the JSON") {
		t.Errorf("non-JSON answer accepted: %v", err)
	}
}

func TestConversationsOff(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{Slug: "oneshot", Model: "m", Enabled: true, Conversations: false})
	res, err := f.run(t, "p", "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t, "p", res.Conversation.ID, "again"); !errors.Is(err, agent.ErrConversationsOff) {
		t.Errorf("err = %v", err)
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	if err := f.core.Agents().SetEnabled(t.Context(), "helper", false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t, "p", "", "hi"); err == nil || !strings.Contains(agent.UserMessage(err), "no enabled agent") {
		t.Errorf("disabled agent ran: %v", err)
	}
	if err := f.core.Agents().SetEnabled(t.Context(), "helper", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.run(t, "p", "", "  "); err == nil {
		t.Error("empty message accepted")
	}
	noModel, _ := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "nomodel", Enabled: true})
	_, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: noModel.Slug, Principal: "p", Message: "hi"})
	if err == nil || !strings.Contains(agent.UserMessage(err), "ollama pull") {
		t.Errorf("agent without a model: %v", err)
	}
	client, _ := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "viaclient", Enabled: true, Backend: agent.BackendClient})
	_, err = f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: client.Slug, Principal: "p", Message: "hi"})
	if err == nil || !strings.Contains(agent.UserMessage(err), "does not lend it") {
		t.Errorf("client model without sampling or fallback: %v", err)
	}
}

func TestAgentValidation(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	cases := []struct {
		name string
		a    agent.Agent
		want string
	}{
		{"bad slug", agent.Agent{Slug: "Has Space"}, "slug"},
		{"slug too long", agent.Agent{Slug: strings.Repeat("a", 65)}, "slug"},
		{"unknown backend", agent.Agent{Slug: "x", Backend: "gpt"}, "backend"},
		{"schema not an object", agent.Agent{Slug: "x", ResponseSchema: json.RawMessage(`[1]`)}, "schema"},
		{"rounds", agent.Agent{Slug: "x", MaxRounds: 1000}, "rounds"},
		{"slug taken", agent.Agent{Slug: "helper"}, "slug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.core.Agents().Save(t.Context(), c.a)
			if err == nil || !strings.Contains(agent.UserMessage(err), c.want) {
				t.Errorf("err = %v, want mention of %q", err, c.want)
			}
		})
	}
	// Survives a restart.
	core2, err := agent.New(t.Context(), agent.Config{History: f.db})
	if err != nil {
		t.Fatal(err)
	}
	defer core2.Close()
	got, ok := core2.Agents().BySlug("helper")
	if !ok || !cmp.Equal(got, f.agent) {
		t.Errorf("reloaded agent differs: %s", cmp.Diff(f.agent, got))
	}
}

func TestClientTokens(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	f := newFixture(t, agent.Config{Now: func() time.Time { return now }}, agent.Agent{})
	ctx := t.Context()
	cl, token, err := f.core.Clients().Create(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "dh_") || len(token) < 40 {
		t.Errorf("token %q is not a 256-bit token", token)
	}
	if _, _, err := f.core.Clients().Create(ctx, "cursor"); err == nil {
		t.Error("duplicate client name accepted")
	}
	got, ok := f.core.Clients().Authenticate(ctx, token)
	if !ok || got.ID != cl.ID {
		t.Fatalf("authenticate = %+v, %v", got, ok)
	}
	for _, bad := range []string{"", "dh_wrong", token + "x", strings.ToUpper(token)} {
		if _, ok := f.core.Clients().Authenticate(ctx, bad); ok {
			t.Errorf("token %q accepted", bad)
		}
	}
	// The store keeps the hash, never the token, and the last use, which
	// is written in the background.
	if err := f.core.Clients().FlushLastUse(ctx); err != nil {
		t.Fatal(err)
	}
	stored, _ := f.db.Clients(ctx)
	if len(stored) != 1 || strings.Contains(string(stored[0].TokenHash), token) || !stored[0].LastUsedAt.Equal(now) {
		t.Errorf("stored client = %+v", stored)
	}
	if err := f.core.Clients().Revoke(ctx, "cursor"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.core.Clients().Authenticate(ctx, token); ok {
		t.Error("revoked token accepted")
	}
	if err := f.core.Clients().Revoke(ctx, "cursor"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	again, token, err := f.core.Clients().Create(ctx, "cursor")
	if err != nil {
		t.Fatalf("name not reusable after revoke: %v", err)
	}
	// Rotating keeps the principal (and so its conversations) and retires
	// the old token at once.
	rotated, newToken, err := f.core.Clients().Rotate(ctx, "cursor")
	if err != nil || rotated.ID != again.ID || newToken == token {
		t.Fatalf("rotate = %+v, %q, %v", rotated, newToken, err)
	}
	if _, ok := f.core.Clients().Authenticate(ctx, token); ok {
		t.Error("token accepted after rotation")
	}
	if got, ok := f.core.Clients().Authenticate(ctx, newToken); !ok || got.ID != again.ID {
		t.Errorf("rotated token: %+v, %v", got, ok)
	}
	if stored, _ := f.db.Clients(ctx); !slices.ContainsFunc(stored, func(c agent.Client) bool { return c.ID == again.ID && c.Active() }) || len(stored) != 2 {
		t.Errorf("stored after rotation = %+v", stored)
	}
	// Rotating a client that does not exist creates it.
	if cl, tok, err := f.core.Clients().Rotate(ctx, "codex"); err != nil || cl.Name != "codex" || tok == "" {
		t.Errorf("rotate a new client = %+v, %q, %v", cl, tok, err)
	}
}

func TestSlowSubscriberNeverBlocksTheRun(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := f.core.Events().Subscribe(ctx) // never read
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		for range 1000 {
			onDelta(agent.Delta{Content: "x"})
		}
		return agenttest.Text("done"), nil
	}
	done := make(chan error, 1)
	go func() { _, err := f.run(t, "p", "", "go"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run blocked on a slow subscriber")
	}
	if f.core.Events().Dropped() == 0 {
		t.Error("no events dropped though the subscriber never read")
	}
	if e := <-events; e.Kind == "" {
		t.Error("buffered event missing")
	}
}

func TestSubscribeSeesTheTurn(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	ctx, cancel := context.WithCancel(t.Context())
	events := f.core.Events().Subscribe(ctx)
	res, err := f.run(t, "p", "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var kinds []agent.EventKind
	for e := range events { // closes after cancel
		if e.Conversation == res.Conversation.ID {
			kinds = append(kinds, e.Kind)
		}
	}
	want := []agent.EventKind{agent.EventTurnStarted, agent.EventModelCall, agent.EventDelta, agent.EventTurnEnded}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEvictedConversationsReloadFromDisk(t *testing.T) {
	f := newFixture(t, agent.Config{ConversationCap: 2}, agent.Agent{})
	var handles []string
	for i := range 5 {
		res, err := f.run(t, "p", "", "message "+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, res.Conversation.ID)
	}
	res, err := f.run(t, "p", handles[0], "still there?")
	if err != nil {
		t.Fatalf("evicted conversation lost: %v", err)
	}
	if got := userMessages(f.model.Requests()[5]); !cmp.Equal(got, []string{"message a", "still there?"}) {
		t.Errorf("history after reload = %q", got)
	}
	if res.Conversation.ID != handles[0] {
		t.Error("different conversation")
	}
}

func TestDefaultAgent(t *testing.T) {
	db := storetest.Open(t)
	lister := &listingModel{names: []string{"qwen3:8b", "llama3.2"}}
	core, err := agent.New(t.Context(), agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: lister}})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	a, ok, err := core.Agents().EnsureDefault(t.Context(), "")
	if err != nil || !ok || a.Slug != "assistant" || a.Model != "qwen3:8b" || !a.Enabled || !a.Conversations {
		t.Fatalf("default agent = %+v, %v, %v", a, ok, err)
	}
	again, _, _ := core.Agents().EnsureDefault(t.Context(), "")
	if again.ID != a.ID || len(core.Agents().List()) != 1 {
		t.Error("created twice")
	}
	// --model changes it; an agent without a model gets the first installed.
	if a, _, _ = core.Agents().EnsureDefault(t.Context(), "llama3.2"); a.Model != "llama3.2" {
		t.Errorf("model not applied: %+v", a)
	}
	a.Model = ""
	if _, err := core.Agents().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if a, _, _ = core.Agents().EnsureDefault(t.Context(), ""); a.Model != "qwen3:8b" {
		t.Errorf("empty model not filled: %+v", a)
	}
	// Someone who deleted or renamed the assistant keeps their own agents.
	a.Slug = "mine"
	if _, err := core.Agents().Save(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := core.Agents().EnsureDefault(t.Context(), ""); ok || len(core.Agents().List()) != 1 {
		t.Error("assistant re-created beside the user's own agents")
	}
}

type listingModel struct {
	agenttest.Model
	names []string
}

func (m *listingModel) ListModels(context.Context) ([]string, error) { return m.names, nil }

func TestClientModelChoice(t *testing.T) {
	clientModel := &agenttest.Model{Reply: func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		return agenttest.Text("from the client's model"), nil
	}}
	ollama := &agenttest.Model{}
	f := newFixture(t, agent.Config{Models: map[agent.Backend]agent.Model{agent.BackendOllama: ollama, agent.BackendClient: clientModel}},
		agent.Agent{Slug: "borrower", Backend: agent.BackendClient, Model: "fallback", Enabled: true})
	lending := agent.WithClientModel(t.Context(), struct{}{})
	res, err := f.core.Conversations().Run(lending, agent.RunRequest{Agent: "borrower", Principal: "p", Message: "hi"})
	if err != nil || res.Text != "from the client's model" || len(ollama.Requests()) != 0 {
		t.Fatalf("with a lending client: %+v %v (ollama calls %d)", res, err, len(ollama.Requests()))
	}
	res, err = f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "borrower", Principal: "p", Message: "hi"})
	if err != nil || res.Text != "echo: hi" || len(clientModel.Requests()) != 1 {
		t.Fatalf("without: %+v %v", res, err)
	}
}

func TestCallerNamesTheTurn(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	const id = "33333333-3333-4333-8333-333333333333"
	res, err := f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi", TurnID: id})
	if err != nil || res.Turn.ID != id {
		t.Fatalf("turn %+v %v", res, err)
	}
	res, err = f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hi", TurnID: "not-a-uuid"})
	if err != nil || res.Turn.ID == "not-a-uuid" {
		t.Errorf("a non-UUID turn id was taken: %+v %v", res, err)
	}
}

func TestPause(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	rev := f.core.Agents().Revision()
	f.core.Settings().SetPaused(true)
	if len(f.core.Agents().Enabled()) != 0 || !f.core.Settings().Paused() || f.core.Agents().Revision() == rev {
		t.Fatal("paused core still serves agents, or adapters were not told")
	}
	if _, err := f.run(t, "p", "", "hi"); err == nil || !strings.Contains(agent.UserMessage(err), "paused") {
		t.Errorf("run while paused: %v", err)
	}
	f.core.Settings().SetPaused(false)
	if len(f.core.Agents().Enabled()) != 1 {
		t.Error("resume did not bring the agent back")
	}
}

func TestAvailableToolsAndModels(t *testing.T) {
	tools := []agent.Tool{
		agenttest.Tool{Name: "write_file", Approval: true},
		agenttest.Tool{Name: "current_time"},
	}
	db := storetest.Open(t)
	core, err := agent.New(t.Context(), agent.Config{History: db, Tools: tools,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: &listingModel{names: []string{"llama3.2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	// Test tools do not say what they can do: they count as doing anything.
	want := []agent.ToolInfo{{Name: "current_time", Description: "test tool current_time", Effects: agent.EffectsUnknown},
		{Name: "write_file", Description: "test tool write_file", NeedsApproval: true, Effects: agent.EffectsUnknown}}
	if diff := cmp.Diff(want, core.Agents().AvailableTools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if names, err := core.Providers().Models(t.Context(), agent.OllamaProvider); err != nil || !cmp.Equal(names, []string{"llama3.2"}) {
		t.Errorf("models = %v, %v", names, err)
	}
}

func TestCancelTurnFromTheDesktop(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	*f.model = *blockingModel(started, release)
	events := f.core.Events().Subscribe(t.Context())
	done := f.runAsync(t, t.Context(), "slow")
	<-started
	var conv string
	for e := range events {
		if e.Kind == agent.EventTurnStarted {
			conv = e.Conversation
			break
		}
	}
	if !f.core.Conversations().CancelTurn(conv) {
		t.Fatal("no running turn found")
	}
	out := <-done
	if out.res.Turn.Status != agent.TurnCancelled || !strings.Contains(agent.UserMessage(out.err), "stopped from the Deskhand desktop") {
		t.Errorf("turn %+v, %v", out.res.Turn, out.err)
	}
	if f.core.Conversations().CancelTurn(conv) {
		t.Error("a finished turn was cancelled again")
	}
}

func TestDeleteAgent(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	events := f.core.Events().Subscribe(t.Context())
	rev := f.core.Agents().Revision()
	if err := f.core.Agents().Delete(t.Context(), "helper"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.core.Agents().BySlug("helper"); ok || f.core.Agents().Revision() == rev {
		t.Error("the agent is still there, or the revision did not move")
	}
	if e := <-events; e.Kind != agent.EventAgentsChanged || e.Agent != "helper" {
		t.Errorf("event = %+v", e)
	}
	if stored, _ := f.db.Agents(t.Context()); len(stored) != 0 {
		t.Errorf("stored agents = %+v", stored)
	}
	if err := f.core.Agents().Delete(t.Context(), "helper"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

// countingHistory counts transcript reads from the store.
type countingHistory struct {
	*store.DB
	reads atomic.Int64
}

func (h *countingHistory) Messages(ctx context.Context, id string) ([]agent.Message, error) {
	h.reads.Add(1)
	return h.DB.Messages(ctx, id)
}

// TestTranscriptKeptBetweenTurns: a conversation's transcript is read from
// the store once, when it is first continued after a start, and then kept:
// the model still gets all of it at every turn.
func TestTranscriptKeptBetweenTurns(t *testing.T) {
	db := storetest.Open(t)
	hist := &countingHistory{DB: db}
	model := &agenttest.Model{}
	newCore := func() *agent.Core {
		core, err := agent.New(t.Context(), agent.Config{History: hist, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
		if err != nil {
			t.Fatal(err)
		}
		return core
	}
	core := newCore()
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	run := func(core *agent.Core, handle, msg string) string {
		res, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Conversation: handle, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		return res.Conversation.ID
	}
	handle := run(core, "", "one")
	run(core, handle, "two")
	run(core, handle, "three")
	if n := hist.reads.Load(); n != 0 {
		t.Errorf("the store's transcript was read %d times; it is kept", n)
	}
	core.Close()
	core = newCore() // a restart: read once, then kept
	defer core.Close()
	run(core, handle, "four")
	run(core, handle, "five")
	if n := hist.reads.Load(); n != 1 {
		t.Errorf("after a restart the transcript was read %d times, want 1", n)
	}
	reqs := model.Requests()
	if got := userMessages(reqs[len(reqs)-1]); strings.Join(got, ",") != "one,two,three,four,five" {
		t.Errorf("the model's last request has %v", got)
	}
}

// TestDeleteAgentStopsItsTurns: deleting an agent while its turn runs
// stops the turn, which is recorded before the agent and its
// conversations go; the caller is told why.
func TestDeleteAgentStopsItsTurns(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	started := make(chan struct{})
	f.model.Reply = func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		close(started)
		<-ctx.Done()
		return agent.ChatResponse{}, ctx.Err()
	}
	done := make(chan error, 1)
	go func() { _, err := f.run(t, "p", "", "work hard"); done <- err }()
	<-started
	if err := f.core.Agents().Delete(t.Context(), "helper"); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !strings.Contains(agent.UserMessage(err), "agent was deleted") {
		t.Errorf("the running turn ended with %v", err)
	}
	if stored, _ := f.db.Agents(t.Context()); len(stored) != 0 {
		t.Errorf("agents left: %+v", stored)
	}
}

// unrecordedStarts is a store that cannot write a turn's start, as when
// another program holds the database locked.
type unrecordedStarts struct{ *store.DB }

func (unrecordedStarts) BeginTurn(context.Context, agent.TurnStart) func() error {
	return func() error { return store.ErrBusy }
}

// TestTurnStopsWhenItsStartIsNotRecorded: a turn whose start cannot be
// written stops rather than run on unrecorded, and the caller is told why.
func TestTurnStopsWhenItsStartIsNotRecorded(t *testing.T) {
	started := make(chan struct{}, 1)
	model := blockingModel(started, nil) // never released: only the failure ends it
	core, err := agent.New(t.Context(), agent.Config{History: unrecordedStarts{storetest.Open(t)}, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "helper", Model: "m", Conversations: true, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err = core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "helper", Principal: "p", Message: "hello"})
	if !errors.Is(err, store.ErrBusy) || agent.UserMessage(err) != store.ErrBusy.Msg {
		t.Errorf("Run = %v (user message %q), want the store's locked error", err, agent.UserMessage(err))
	}
}

// TestAgentLookupFollowsRenames: the slug index moves with a rename, a
// disable and a delete.
func TestAgentLookupFollowsRenames(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	other, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "zeta", Model: "m", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	other.Slug = "alpha"
	if _, err := f.core.Agents().Save(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.core.Agents().BySlug("zeta"); ok {
		t.Error("the old slug still finds the renamed agent")
	}
	if a, ok := f.core.Agents().Served("alpha"); !ok || a.ID != other.ID {
		t.Errorf("ServedAgent(alpha) = %+v, %v", a, ok)
	}
	var slugs []string
	for _, a := range f.core.Agents().List() {
		slugs = append(slugs, a.Slug)
	}
	if diff := cmp.Diff([]string{"alpha", "helper"}, slugs); diff != "" {
		t.Errorf("Agents (-want +got):\n%s", diff)
	}
	if err := f.core.Agents().SetEnabled(t.Context(), "alpha", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.core.Agents().Served("alpha"); ok {
		t.Error("a disabled agent is served")
	}
	if err := f.core.Agents().Delete(t.Context(), "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.core.Agents().BySlug("alpha"); ok {
		t.Error("a deleted agent is found")
	}
}

// TestSubscribeToKinds: a subscriber that names kinds gets those alone,
// so a flood of deltas cannot crowd an agent change out of its buffer.
func TestSubscribeToKinds(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	changes := f.core.Events().Subscribe(t.Context(), agent.EventAgentsChanged)
	for range 300 { // more turn events than a subscriber's buffer holds
		if _, err := f.run(t, "p", "", "hi"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.core.Agents().Save(t.Context(), agent.Agent{Slug: "other", Model: "m", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-changes:
		if e.Kind != agent.EventAgentsChanged || e.Agent != "other" {
			t.Errorf("first event = %+v, want the agent change", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent change never came")
	}
	if n := len(changes); n != 0 {
		t.Errorf("%d more events queued, want none", n)
	}
}

// TestSubscribeWhere: a subscriber gets the events its filter keeps,
// and the others neither fill its buffer nor count as dropped.
func TestSubscribeWhere(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	first, err := f.run(t, "p", "", "hi")
	if err != nil {
		t.Fatal(err)
	}
	watched := first.Conversation.ID
	events := f.core.Events().SubscribeWhere(t.Context(), func(e agent.Event) bool { return e.Conversation == watched },
		agent.EventTurnStarted, agent.EventTurnEnded)
	for range 300 { // more turn events than a subscriber's buffer holds
		if _, err := f.run(t, "p", "", "hi"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.run(t, "p", watched, "again"); err != nil {
		t.Fatal(err)
	}
	var got []agent.EventKind
	for len(events) > 0 {
		e := <-events
		if e.Conversation != watched {
			t.Errorf("an event of conversation %s came", e.Conversation)
		}
		got = append(got, e.Kind)
	}
	if want := []agent.EventKind{agent.EventTurnStarted, agent.EventTurnEnded}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if n := f.core.Events().Dropped(); n != 0 {
		t.Errorf("%d events dropped", n)
	}
}

func TestReachableHostsAreHostAndPort(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	for _, tc := range []struct {
		name    string
		entries []string
		want    []string
		err     string
	}{
		{"normalised", []string{" NAS.local:8080 ", "", "nas.local:8080", "[FD00::5]:80", "192.168.1.20:11434"},
			[]string{"nas.local:8080", "[fd00::5]:80", "192.168.1.20:11434"}, ""},
		{"no port", []string{"nas.local"}, nil, `"nas.local" is not a host and port`},
		{"port out of range", []string{"nas.local:70000"}, nil, "is not a host and port"},
		{"a URL", []string{"http://nas.local:80"}, nil, "is not a host and port"},
		{"no host", []string{":8080"}, nil, "is not a host and port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := f.agent
			a.ReachableHosts = tc.entries
			saved, err := f.core.Agents().Save(t.Context(), a)
			if tc.err != "" {
				if err == nil || !strings.Contains(agent.UserMessage(err), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, saved.ReachableHosts); diff != "" {
				t.Errorf("reachable hosts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRotateClientCreatedByAnotherProcess: two cores on one database, as
// two 'deskhand connect' runs are when the app is not running. A client
// the other created after this core loaded is rotated (the same
// principal, a new token), not created a second time.
func TestRotateClientCreatedByAnotherProcess(t *testing.T) {
	ctx := t.Context()
	first := newFixture(t, agent.Config{}, agent.Agent{})
	second, err := agent.New(ctx, agent.Config{History: first.db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: first.model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	created, _, err := first.core.Clients().Rotate(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	rotated, token, err := second.Clients().Rotate(ctx, "cursor")
	if err != nil || rotated.ID != created.ID {
		t.Fatalf("rotate in the second core = %+v, %v; want client %s", rotated, err, created.ID)
	}
	if got, ok := second.Clients().Authenticate(ctx, token); !ok || got.ID != created.ID {
		t.Errorf("new token: %+v, %v", got, ok)
	}
	if stored, _ := first.db.Clients(ctx); len(stored) != 1 {
		t.Errorf("stored clients = %+v", stored)
	}
}

// TestPrincipalOfAName: a caller named after an active client is that
// client; a revoked one, or a name no client has, is this computer's own.
func TestPrincipalOfAName(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	clients := f.core.Clients()
	cursor, _, err := clients.Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := clients.Create(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	if err := clients.Revoke(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"cursor": cursor.ID, "old": agent.LocalPrincipal, "nobody": agent.LocalPrincipal, "": agent.LocalPrincipal} {
		if got := clients.Principal(name); got != want {
			t.Errorf("Principal(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestNoModelIsTold: a call of an agent without a model fails with
// ErrNoModel, so that the window can say where to pick one.
func TestNoModelIsTold(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{Slug: "empty", Enabled: true})
	_, err := f.run(t, "p", "", "hi")
	if !errors.Is(err, agent.ErrNoModel) || !strings.Contains(agent.UserMessage(err), "has no model") {
		t.Errorf("Run = %v, want ErrNoModel", err)
	}
}
