package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// teamScript answers as each agent would: the agent is told by its
// prompt, "I am SLUG".
type teamScript map[string]func(ctx context.Context, req agent.ChatRequest) (agent.ChatResponse, error)

func (s teamScript) model() *agenttest.Model {
	return &agenttest.Model{Reply: func(ctx context.Context, _ int, req agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
		who := strings.TrimPrefix(req.Messages[0].Content, "I am ")
		reply, ok := s[who]
		if !ok {
			return agent.ChatResponse{}, errors.New("no script for " + who)
		}
		return reply(ctx, req)
	}}
}

// delegate calls the member with the user's message on the way down, and
// answers "SLUG got: RESULT" with the tool's result on the way up.
func delegate(slug, member string) func(context.Context, agent.ChatRequest) (agent.ChatResponse, error) {
	return func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agent.RoleTool {
			return agenttest.Text(slug + " got: " + last.Content), nil
		}
		return agenttest.Calls("call-"+slug, agent.TeamToolName(member), map[string]string{"message": last.Content + " (via " + slug + ")"}), nil
	}
}

func answer(text string) func(context.Context, agent.ChatRequest) (agent.ChatResponse, error) {
	return func(context.Context, agent.ChatRequest) (agent.ChatResponse, error) { return agenttest.Text(text), nil }
}

type teamFixture struct {
	core   *agent.Core
	agents map[string]agent.Agent
}

// newTeam saves agents of these slugs; each one's team is the slugs
// given for it. Agents are saved members first.
func newTeam(t *testing.T, cfg agent.Config, script teamScript, order []string, teams map[string][]string) *teamFixture {
	t.Helper()
	cfg.History = storetest.Open(t)
	cfg.Models = map[agent.Backend]agent.Model{agent.BackendOllama: script.model()}
	core, err := agent.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	f := &teamFixture{core: core, agents: map[string]agent.Agent{}}
	for _, slug := range order {
		a := agent.Agent{Slug: slug, Model: "m", Prompt: "I am " + slug, Conversations: true, Enabled: true,
			Description: "The agent " + slug + "."}
		for _, m := range teams[slug] {
			a.Team = append(a.Team, f.agents[m].ID)
		}
		if f.agents[slug], err = core.Agents().Save(t.Context(), a); err != nil {
			t.Fatalf("save %s: %v", slug, err)
		}
	}
	return f
}

func (f *teamFixture) run(ctx context.Context, slug, principal, msg string) (*agent.RunResult, error) {
	return f.core.Conversations().Run(ctx, agent.RunRequest{Agent: slug, Principal: principal, Message: msg, TurnID: uuid.NewString()})
}

func toolNames(req agent.ChatRequest) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

func TestTeamDelegation(t *testing.T) {
	script := teamScript{"a": delegate("a", "b"), "b": delegate("b", "c"), "c": answer("c knows 42")}
	f := newTeam(t, agent.Config{}, script, []string{"c", "b", "a"}, map[string][]string{"a": {"b"}, "b": {"c"}})
	ctx := t.Context()
	turnID := uuid.NewString()
	progress := f.core.Events().Subscribe(ctx, agent.EventMemberProgress)

	res, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: "a", Principal: "alice", Message: "what is it?", TurnID: turnID})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a got: b got: c knows 42"; res.Text != want {
		t.Errorf("answer = %q, want %q", res.Text, want)
	}

	// Each member ran in its own conversation, linked to its caller's turn.
	subsA, err := f.core.Conversations().Subs(ctx, turnID)
	if err != nil || len(subsA) != 1 {
		t.Fatalf("sub-conversations of a's turn = %+v, %v; want one", subsA, err)
	}
	b := subsA[0]
	if b.AgentID != f.agents["b"].ID || b.ParentConversation != res.Conversation.ID || b.ParentTurn != turnID || b.Principal != "alice" {
		t.Errorf("b's conversation = %+v", b)
	}
	msgs, turns, err := f.core.Conversations().Transcript(ctx, b.ID)
	if err != nil || len(turns) != 1 {
		t.Fatalf("b's transcript: %d turns, %v", len(turns), err)
	}
	if msgs[0].Content != "what is it? (via a)" {
		t.Errorf("b was asked %q", msgs[0].Content)
	}
	subsB, err := f.core.Conversations().Subs(ctx, turns[0].ID)
	if err != nil || len(subsB) != 1 || subsB[0].AgentID != f.agents["c"].ID || subsB[0].ParentConversation != b.ID {
		t.Errorf("sub-conversations of b's turn = %+v, %v", subsB, err)
	}
	// The member's conversations are not listed as the client's own.
	list, err := f.core.Conversations().ListFor(ctx, "alice", agent.PageMark{}, 10)
	if err != nil || len(list) != 1 || list[0].ID != res.Conversation.ID {
		t.Errorf("ConversationsOf(alice) = %+v, %v; want a's conversation only", list, err)
	}

	// The progress of b and of c reached a's turn, in order.
	var got []string
	for len(progress) > 0 {
		if e := <-progress; e.Turn == turnID {
			got = append(got, e.Text)
		}
	}
	want := []string{"b: thinking (model round 1)", "b: calling the tool agent_c", "b: c: thinking (model round 1)", "b: thinking (model round 2)"}
	if !slices.Equal(got, want) {
		t.Errorf("progress on a's turn = %q, want %q", got, want)
	}
}

func TestTeamToolSpec(t *testing.T) {
	var seen []agent.ChatRequest
	script := teamScript{"a": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
		seen = append(seen, req)
		return agenttest.Text("done"), nil
	}, "b": answer("b")}
	f := newTeam(t, agent.Config{}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	if _, err := f.run(t.Context(), "a", "alice", "hi"); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(seen[0].Tools, func(s agent.ToolSpec) bool { return s.Name == "agent_b" })
	if i < 0 {
		t.Fatalf("tools offered = %q, want agent_b among them", toolNames(seen[0]))
	}
	spec := seen[0].Tools[i]
	var schema map[string]any
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if spec.Description != "The agent b." || schema["additionalProperties"] != false || !slices.Equal(schema["required"].([]any), []any{"message"}) {
		t.Errorf("spec = %s %s", spec.Description, spec.Parameters)
	}
	// Names stay within what model APIs accept, and distinct.
	long := strings.Repeat("x", 64)
	for _, slug := range []string{long, long[:63] + "y"} {
		if n := agent.TeamToolName(slug); len(n) > 64 || !strings.HasPrefix(n, agent.TeamToolPrefix) {
			t.Errorf("TeamToolName(%s) = %q", slug, n)
		}
	}
	if agent.TeamToolName(long) == agent.TeamToolName(long[:63]+"y") {
		t.Error("two long slugs share a tool name")
	}
}

func TestTeamMemberContinuesInTurn(t *testing.T) {
	calls := 0
	script := teamScript{
		"a": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
			calls++
			if calls <= 2 {
				return agenttest.Calls("c", "agent_b", map[string]string{"message": "part " + string(rune('0'+calls))}), nil
			}
			return agenttest.Text("a: " + req.Messages[len(req.Messages)-1].Content), nil
		},
		// b says how many user messages its conversation holds.
		"b": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
			return agenttest.Text(strings.Join(userMessages(req), "+")), nil
		},
	}
	f := newTeam(t, agent.Config{}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	res, err := f.run(t.Context(), "a", "alice", "go")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a: part 1+part 2"; res.Text != want {
		t.Errorf("answer = %q, want %q (the second call continues b's conversation)", res.Text, want)
	}
	subs, err := f.core.Conversations().Subs(t.Context(), res.Turn.ID)
	if err != nil || len(subs) != 1 {
		t.Errorf("sub-conversations = %+v, %v; want one", subs, err)
	}
	// A client cannot continue a member's conversation with its handle.
	_, err = f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "b", Principal: "alice", Conversation: subs[0].ID, Message: "more"})
	if !errors.Is(err, agent.ErrUnknownConversation) {
		t.Errorf("continuing a sub-conversation from outside: %v, want ErrUnknownConversation", err)
	}
}

func TestTeamCycleRefused(t *testing.T) {
	tests := []struct {
		name      string
		teams     map[string][]string // saved first, in order a, b, c
		edit      string
		team      []string
		wantCycle string
	}{
		{"self", nil, "a", []string{"a"}, "a → a"},
		{"two", map[string][]string{"a": {"b"}}, "b", []string{"a"}, "b → a → b"},
		{"three", map[string][]string{"b": {"c"}, "a": {"b"}}, "c", []string{"a"}, "c → a → b → c"},
		{"through a second member", map[string][]string{"b": {"c"}, "a": {"b"}}, "c", []string{"b", "a"}, "c → b → c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTeam(t, agent.Config{}, teamScript{}, []string{"c", "b", "a"}, tt.teams)
			a := f.agents[tt.edit]
			a.Team = nil
			for _, m := range tt.team {
				a.Team = append(a.Team, f.agents[m].ID)
			}
			_, err := f.core.Agents().Save(t.Context(), a)
			if err == nil || !strings.Contains(agent.UserMessage(err), tt.wantCycle) {
				t.Fatalf("SaveAgent = %v, want a refusal naming %q", err, tt.wantCycle)
			}
			if got, _ := f.core.Agents().BySlug(tt.edit); len(got.Team) != len(tt.teams[tt.edit]) {
				t.Errorf("the refused team was kept: %v", got.Team)
			}
		})
	}

	t.Run("unknown member", func(t *testing.T) {
		f := newTeam(t, agent.Config{}, teamScript{}, []string{"a"}, nil)
		a := f.agents["a"]
		a.Team = []string{uuid.NewString()}
		if _, err := f.core.Agents().Save(t.Context(), a); !errors.Is(err, agent.ErrNotFound) {
			t.Errorf("SaveAgent with an unknown member = %v, want ErrNotFound", err)
		}
	})
	t.Run("duplicates dropped, order kept, deletion leaves every team", func(t *testing.T) {
		f := newTeam(t, agent.Config{}, teamScript{}, []string{"c", "b", "a"}, nil)
		a := f.agents["a"]
		a.Team = []string{f.agents["c"].ID, f.agents["b"].ID, f.agents["c"].ID}
		saved, err := f.core.Agents().Save(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{f.agents["c"].ID, f.agents["b"].ID}; !slices.Equal(saved.Team, want) {
			t.Errorf("team = %v, want %v", saved.Team, want)
		}
		if err := f.core.Agents().Delete(t.Context(), "c"); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.core.Agents().BySlug("a"); !slices.Equal(got.Team, []string{f.agents["b"].ID}) {
			t.Errorf("team after c was deleted = %v", got.Team)
		}
	})
}

func TestTeamDepth(t *testing.T) {
	script := teamScript{"a": delegate("a", "b"), "b": delegate("b", "c"), "c": delegate("c", "d"), "d": answer("d here")}
	refused := func(member string, limit int) string {
		return `error: agent "` + member + `" was not called: agents may call agents only ` + string(rune('0'+limit)) + " deep"
	}
	tests := []struct {
		setting string
		want    string // the answer's start
	}{
		{"", "a got: b got: c got: " + refused("d", 3)},
		{"3", "a got: b got: c got: " + refused("d", 3)},
		{"2", "a got: b got: " + refused("c", 2)},
		{"1", "a got: " + refused("b", 1)},
		{"4", "a got: b got: c got: d here"},
		{"nonsense", "a got: b got: c got: " + refused("d", 3)},
	}
	for _, tt := range tests {
		t.Run("max "+tt.setting, func(t *testing.T) {
			f := newTeam(t, agent.Config{}, script, []string{"d", "c", "b", "a"}, map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"d"}})
			if tt.setting != "" {
				if err := f.core.Settings().Set(t.Context(), agent.SettingTeamMaxDepth, tt.setting); err != nil {
					t.Fatal(err)
				}
			}
			res, err := f.run(t.Context(), "a", "alice", "go")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, tt.want) {
				t.Errorf("answer = %q, want it to start %q", res.Text, tt.want)
			}
		})
	}
}

func TestTeamMemberFailureIsToolError(t *testing.T) {
	script := teamScript{"a": delegate("a", "b"), "b": func(context.Context, agent.ChatRequest) (agent.ChatResponse, error) {
		return agent.ChatResponse{}, agent.Userf(nil, "the model server is down")
	}}
	f := newTeam(t, agent.Config{}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	res, err := f.run(t.Context(), "a", "alice", "go")
	if err != nil {
		t.Fatalf("a's turn failed with its member: %v", err)
	}
	if want := `a got: error: agent "b" did not answer: the model server is down`; res.Text != want {
		t.Errorf("answer = %q, want %q", res.Text, want)
	}

	// A disabled member is not offered, and a call of it is no tool.
	if err := f.core.Agents().SetEnabled(t.Context(), "b", false); err != nil {
		t.Fatal(err)
	}
	if res, err = f.run(t.Context(), "a", "alice", "go"); err != nil || res.Text != `a got: error: there is no tool named "agent_b"` {
		t.Errorf("with b disabled: %q, %v", res.Text, err)
	}
}

func TestTeamQuestionAnsweredAtDesktop(t *testing.T) {
	script := teamScript{
		"a": delegate("a", "b"),
		"b": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == agent.RoleTool {
				return agenttest.Text("b heard " + last.Content), nil
			}
			return agenttest.Calls("q", "ask_user", map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}}), nil
		},
	}
	f := newTeam(t, agent.Config{Desktop: true}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	ctx := t.Context()
	asked := f.core.Events().Subscribe(ctx, agent.EventQuestionAsked)
	type result struct {
		res *agent.RunResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := f.run(ctx, "a", "alice", "pick")
		done <- result{res, err}
	}()
	e := <-asked
	if e.Agent != "b" {
		t.Errorf("the question came from %q, want b", e.Agent)
	}
	pending := f.core.Questions().Pending()
	if len(pending) != 1 || pending[0].Text != "Which colour?" || pending[0].Principal != "alice" {
		t.Fatalf("pending = %+v", pending)
	}
	if err := f.core.Questions().Answer(e.Question, map[string]any{"answer": "blue"}, false); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "a got: b heard blue"; r.res.Text != want {
		t.Errorf("answer = %q, want %q", r.res.Text, want)
	}
}

// askerFunc answers as a client would, by elicitation.
type askerFunc func(ctx context.Context, q agent.Question) (agent.Answer, error)

func (f askerFunc) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) { return f(ctx, q) }

func TestTeamQuestionReachesCallingClient(t *testing.T) {
	script := teamScript{
		"a": delegate("a", "b"),
		"b": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == agent.RoleTool {
				return agenttest.Text("b heard " + last.Content), nil
			}
			return agenttest.Calls("q", "ask_user", map[string]any{"question": "Name?"}), nil
		},
	}
	f := newTeam(t, agent.Config{}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	var askedOf []string
	ctx := agent.WithAsker(t.Context(), askerFunc(func(_ context.Context, q agent.Question) (agent.Answer, error) {
		askedOf = append(askedOf, q.Agent+": "+q.Text)
		return agent.Answer{Text: "Ada"}, nil
	}))
	res, err := f.run(ctx, "a", "alice", "who")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a got: b heard Ada" || !slices.Equal(askedOf, []string{"b: Name?"}) {
		t.Errorf("answer %q, asked %q", res.Text, askedOf)
	}
}

func TestTeamCancelReachesMember(t *testing.T) {
	entered := make(chan struct{})
	script := teamScript{"a": delegate("a", "b"), "b": func(ctx context.Context, _ agent.ChatRequest) (agent.ChatResponse, error) {
		close(entered)
		<-ctx.Done()
		return agent.ChatResponse{}, ctx.Err()
	}}
	f := newTeam(t, agent.Config{}, script, []string{"b", "a"}, map[string][]string{"a": {"b"}})
	ctx, cancel := context.WithCancel(t.Context())
	turnID := uuid.NewString()
	done := make(chan error, 1)
	go func() {
		_, err := f.core.Conversations().Run(ctx, agent.RunRequest{Agent: "a", Principal: "alice", Message: "go", TurnID: turnID})
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a's turn completed after it was cancelled")
	}
	subs, err := f.core.Conversations().Subs(t.Context(), turnID)
	if err != nil || len(subs) != 1 {
		t.Fatalf("sub-conversations = %+v, %v", subs, err)
	}
	_, turns, err := f.core.Conversations().Transcript(t.Context(), subs[0].ID)
	if err != nil || len(turns) != 1 || turns[0].Status != agent.TurnCancelled {
		t.Errorf("b's turns = %+v, %v; want one cancelled", turns, err)
	}
}

func TestTeamHidesWhatTheClientCannotSee(t *testing.T) {
	var offered [][]string
	script := teamScript{
		"a": func(_ context.Context, req agent.ChatRequest) (agent.ChatResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			if last.Role == agent.RoleTool {
				return agenttest.Text("a got: " + last.Content), nil
			}
			offered = append(offered, toolNames(req))
			return agenttest.Calls("x", "agent_b", map[string]string{"message": "secret work"}), nil
		},
		"b": answer("b's secret"),
		"c": answer("c"),
	}
	f := newTeam(t, agent.Config{}, script, []string{"c", "b", "a"}, map[string][]string{"a": {"b", "c"}})
	ctx := t.Context()
	cursor, _, err := f.core.Clients().Create(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.core.Clients().SetAgents(ctx, "cursor", false, []string{"a", "c"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.run(ctx, "a", cursor.ID, "go")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(offered[0], "agent_b") || !slices.Contains(offered[0], "agent_c") {
		t.Errorf("cursor's turn of a was offered %q: want agent_c, not agent_b", offered[0])
	}
	if want := `a got: error: there is no tool named "agent_b"`; res.Text != want {
		t.Errorf("answer = %q, want %q", res.Text, want)
	}
	// A client that sees every agent reaches b.
	if res, err = f.run(ctx, "a", "alice", "go"); err != nil || res.Text != "a got: b's secret" {
		t.Errorf("alice: %q, %v", res.Text, err)
	}
}

func TestTeamEffectsReachTheCaller(t *testing.T) {
	writer := effectsTool{silentTool{"write"}, agent.EffectWrites}
	fetcher := effectsTool{silentTool{"fetch"}, agent.EffectFetches | agent.EffectSends}
	f := newTeam(t, agent.Config{Tools: []agent.Tool{writer, fetcher}}, teamScript{}, []string{"c", "b", "a"}, map[string][]string{"a": {"b"}, "b": {"c"}})
	ctx := t.Context()
	b, c := f.agents["b"], f.agents["c"]
	if h := f.core.Agents().Hints(f.agents["a"]); !h.ReadOnly || h.Destructive || h.OpenWorld {
		t.Errorf("a with tool-less members: %+v, want read-only", h)
	}
	b.Tools = []agent.AgentTool{{Name: "write"}}
	c.Tools = []agent.AgentTool{{Name: "fetch"}}
	for _, m := range []agent.Agent{b, c} {
		if _, err := f.core.Agents().Save(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := f.core.Agents().BySlug("a")
	if h := f.core.Agents().Hints(a); h.ReadOnly || !h.Destructive || !h.OpenWorld {
		t.Errorf("a reaching b's write and c's fetch: %+v", h)
	}
	// A disabled member cannot be called: it adds nothing.
	if err := f.core.Agents().SetEnabled(ctx, "b", false); err != nil {
		t.Fatal(err)
	}
	if h := f.core.Agents().Hints(a); !h.ReadOnly {
		t.Errorf("a with b disabled: %+v, want read-only", h)
	}
}
