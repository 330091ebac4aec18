package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Teams: an agent may hand work to other agents, its team (Agent.Team, by
// ID). Each member is offered to its model as the tool agent_<slug>,
// taking {"message": text}; calling it runs the member's own turn (its
// model, prompt, tools, folders and approvals) in a conversation of its
// own, linked to the calling turn, and the member's answer is the tool's
// result. The member's questions go where the caller's would (the asker in
// the context, and the desktop), its progress is forwarded to the calling
// turn (EventMemberProgress), and cancelling the caller cancels it.

// TeamToolPrefix starts the name of every team member's tool; no built-in
// tool's name starts with it.
const TeamToolPrefix = "agent_"

// SettingTeamMaxDepth is the setting that bounds how deep agents may call
// agents, counting the agent a client called as 1 (DefaultTeamMaxDepth
// when unset): with 3, a client's agent may call a member, which may call
// one more, and that one's calls of members are refused.
const SettingTeamMaxDepth = "team.max_depth"

// DefaultTeamMaxDepth is SettingTeamMaxDepth when it is unset.
const DefaultTeamMaxDepth = 3

// MaxTeamSize bounds an agent's team.
const MaxTeamSize = 32

// MaxMemberResult caps the answer of a member the caller's model reads,
// as the built-in tools' read and fetch limits do.
const MaxMemberResult = 1 << 20

// TeamToolName is the tool a member of this slug is offered as: at most
// 64 characters of [a-zA-Z0-9_-], as model APIs accept. A slug too long is
// cut and given a short hash of the whole, so that names stay distinct.
func TeamToolName(slug string) string {
	name := TeamToolPrefix + slug
	if len(name) <= 64 {
		return name
	}
	sum := sha256.Sum256([]byte(slug))
	return name[:64-9] + "_" + hex.EncodeToString(sum[:4])
}

// teamLink is the turn that called a member: where its conversation hangs.
type teamLink struct {
	conversation, turn string
}

// link gives a new conversation its parent; nothing without one.
func (l *teamLink) link(conv *Conversation) {
	if l != nil {
		conv.ParentConversation, conv.ParentTurn = l.conversation, l.turn
	}
}

// continues says whether a call may continue the conversation: a client's
// or the desktop's call (no link) only a top-level conversation, a
// member's call only the conversation it had in the same calling turn.
func (l *teamLink) continues(conv Conversation) bool {
	if l == nil {
		return conv.ParentTurn == ""
	}
	return conv.ParentTurn == l.turn
}

type teamDepthKey struct{}

// teamDepth is how deep the turn of ctx runs: 1 for the agent a client
// (or the desktop) called, 2 for its member, and so on.
func teamDepth(ctx context.Context) int {
	if d, ok := ctx.Value(teamDepthKey{}).(int); ok {
		return d
	}
	return 1
}

// maxTeamDepth reads SettingTeamMaxDepth; a value that is not a whole
// number of at least 1 counts as the default, and is logged.
func (c *Core) maxTeamDepth(ctx context.Context) int {
	v, err := c.settings.Get(ctx, SettingTeamMaxDepth, "")
	if err != nil {
		c.log.Warn("read the team depth setting", "err", err)
		return DefaultTeamMaxDepth
	}
	if v == "" {
		return DefaultTeamMaxDepth
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		c.log.Warn("the team depth setting is not a whole number of at least 1; using the default", "value", v, "default", DefaultTeamMaxDepth)
		return DefaultTeamMaxDepth
	}
	return n
}

// checkTeam refuses a team with a member that does not exist (or the
// agent itself) or that would make a cycle, naming it; duplicates are
// dropped. It runs under agentWrites, on the agents as they are.
func (c *Core) checkTeam(a *Agent) error {
	if len(a.Team) == 0 {
		a.Team = nil
		return nil
	}
	c.agents.mu.Lock()
	defer c.agents.mu.Unlock()
	team := make([]string, 0, len(a.Team))
	for _, id := range a.Team {
		id = strings.TrimSpace(id)
		if slices.Contains(team, id) {
			continue
		}
		if id == a.ID {
			return Userf(nil, "agent %q cannot be in its own team: that would be a cycle (%s → %s)", a.Slug, a.Slug, a.Slug)
		}
		if _, ok := c.agents.byID[id]; !ok {
			return Userf(ErrNotFound, "agent %q: team member %q does not exist (it may have been deleted)", a.Slug, id)
		}
		team = append(team, id)
	}
	if len(team) > MaxTeamSize {
		return Userf(nil, "agent %q: a team may have at most %d members", a.Slug, MaxTeamSize)
	}
	a.Team = team
	teamOf := func(id string) []string {
		if id == a.ID {
			return a.Team
		}
		return c.agents.byID[id].Team
	}
	slugOf := func(id string) string {
		if id == a.ID {
			return a.Slug
		}
		return c.agents.byID[id].Slug
	}
	// Any cycle made by this change goes through a: search from a for a.
	path := []string{a.ID}
	done := map[string]bool{}
	var visit func(id string) bool
	visit = func(id string) bool {
		for _, m := range teamOf(id) {
			if m == a.ID {
				path = append(path, m)
				return true
			}
			if done[m] {
				continue
			}
			done[m] = true
			path = append(path, m)
			if visit(m) {
				return true
			}
			path = path[:len(path)-1]
		}
		return false
	}
	if visit(a.ID) {
		names := make([]string, len(path))
		for i, id := range path {
			names[i] = slugOf(id)
		}
		return Userf(nil, "agent %q: this team would make a cycle, where agents call each other without end: %s; take one of them out of a team", a.Slug, strings.Join(names, " → "))
	}
	return nil
}

// dropFromTeams removes a deleted agent from every team in memory (the
// store's cascade did the same there).
func (c *Core) dropFromTeams(id string) {
	c.agents.mu.Lock()
	changed := false
	for aid, a := range c.agents.byID {
		if i := slices.Index(a.Team, id); i >= 0 {
			a.Team = slices.Delete(slices.Clone(a.Team), i, i+1)
			if len(a.Team) == 0 {
				a.Team = nil
			}
			c.agents.byID[aid] = a
			changed = true
		}
	}
	if changed {
		c.agentsChangedLocked()
	}
	c.agents.mu.Unlock()
	if changed {
		c.agents.rev.Add(1)
		c.publish(Event{Kind: EventAgentsChanged})
	}
}

// addTeamTools offers the turn's model its agent's team: the members that
// exist, are enabled and that the turn's principal sees (a client never
// reaches through a team an agent it cannot see).
func (c *Core) addTeamTools(_ context.Context, run *turnRun) {
	if len(run.agent.Team) == 0 {
		return
	}
	v := c.clients.VisibleTo(run.turn.Principal)
	for _, id := range run.agent.Team {
		c.agents.mu.Lock()
		m, ok := c.agents.byID[id]
		c.agents.mu.Unlock()
		if !ok || !m.Enabled || !v.Sees(m.Slug) {
			continue
		}
		name := TeamToolName(m.Slug)
		if _, taken := run.tools[name]; taken {
			c.log.Warn("a team member's tool name is taken; the member is not offered", "agent", run.agent.Slug, "member", m.Slug, "tool", name)
			continue
		}
		run.tools[name] = agentTool{Tool: &memberTool{core: c, run: run, member: m, name: name}}
	}
}

// memberTool is one team member, offered to one turn of its caller.
type memberTool struct {
	core   *Core
	run    *turnRun // the caller's
	member Agent
	name   string

	mu   sync.Mutex
	conv string // the member's conversation in this turn, once it has one
}

var memberParameters = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string",` +
	`"description":"What you want this agent to do, in full: it sees nothing else of your conversation."}},` +
	`"required":["message"],"additionalProperties":false}`)

func (t *memberTool) Spec() ToolSpec {
	desc := strings.TrimSpace(t.member.Description)
	if desc == "" {
		desc = fmt.Sprintf("Hand work to the agent %q.", t.member.Name)
	}
	return ToolSpec{Name: t.name, Description: desc, Parameters: memberParameters}
}

// DecodeArguments takes exactly {"message": text}, not empty.
func (t *memberTool) DecodeArguments(raw json.RawMessage) (json.RawMessage, error) {
	if err := CheckArgumentKeys(t.name, raw, []string{"message"}); err != nil {
		return nil, err
	}
	var in struct {
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.Message == nil {
		return nil, Userf(err, "%s takes {\"message\": text}", t.name)
	}
	if strings.TrimSpace(*in.Message) == "" {
		return nil, Userf(nil, "'message' is empty: say what you want the agent to do")
	}
	return json.Marshal(map[string]string{"message": *in.Message})
}

// Call runs the member's turn and returns its answer. What goes wrong in
// the member is an error the caller's model reads; the caller's turn goes
// on (unless it was cancelled: the loop sees that).
func (t *memberTool) Call(ctx context.Context, _ Agent, args json.RawMessage) (string, error) {
	c, run := t.core, t.run
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", Userf(err, "%s takes {\"message\": text}", t.name)
	}
	depth := teamDepth(ctx) + 1
	if limit := c.maxTeamDepth(ctx); depth > limit {
		return "", Userf(nil, "agent %q was not called: agents may call agents only %d deep (the setting %s), and this call would be %d deep; answer with what you have",
			t.member.Slug, limit, SettingTeamMaxDepth, depth)
	}
	// The member is found by ID, so a rename since the turn began changes
	// nothing; visibility may have changed too.
	c.agents.mu.Lock()
	member, ok := c.agents.byID[t.member.ID]
	c.agents.mu.Unlock()
	if !ok {
		return "", Userf(ErrNotFound, "agent %q is not available (disabled or deleted)", t.member.Slug)
	}
	if !c.clients.VisibleTo(run.turn.Principal).Sees(member.Slug) {
		return "", Userf(nil, "there is no tool named %q", t.name)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	turnID := uuid.NewString()
	stop := c.forwardProgress(ctx, run, member.Slug, turnID)
	res, err := c.conversations.Run(context.WithValue(ctx, teamDepthKey{}, depth), RunRequest{
		Agent: member.Slug, Principal: run.turn.Principal, Conversation: t.conv, Message: in.Message, TurnID: turnID,
		parent: &teamLink{conversation: run.turn.ConversationID, turn: run.turn.ID},
	})
	stop()
	if res != nil && res.Conversation.ID != "" {
		t.conv = res.Conversation.ID
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return "", Userf(err, "agent %q is not available (disabled or deleted)", member.Slug)
		}
		return "", Userf(err, "agent %q did not answer: %s", member.Slug, UserMessage(err))
	}
	return capMemberText(res.Text, MaxMemberResult), nil
}

// forwardProgress republishes what the member's turn does as
// EventMemberProgress on the caller's turn, until stop, which returns
// once every event seen is forwarded.
func (c *Core) forwardProgress(ctx context.Context, run *turnRun, member, turnID string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	events := c.events.Subscribe(ctx, EventModelCall, EventToolCall, EventQuestionAsked, EventMemberProgress)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rounds := 0
		for e := range events {
			if e.Turn != turnID {
				continue
			}
			var what string
			switch e.Kind {
			case EventModelCall:
				rounds++
				what = fmt.Sprintf("thinking (model round %d)", rounds)
			case EventToolCall:
				what = "calling the tool " + e.Text
			case EventQuestionAsked:
				what = "waiting for an answer: " + e.Text
			case EventMemberProgress:
				what = e.Text
			}
			c.publish(Event{Kind: EventMemberProgress, Agent: run.agent.Slug, Conversation: run.turn.ConversationID, Turn: run.turn.ID, Text: member + ": " + what})
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// capMemberText cuts text at max bytes (on a rune boundary) and says so.
func capMemberText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n\n[truncated: the answer is %d bytes; only the first %d bytes are shown (the limit is %d bytes)]", len(text), cut, max)
}

// teamEffects is what the agent can do through its team: the effects of
// every enabled member it reaches, members' members included.
func (c *Core) teamEffects(a Agent) Effects {
	var all Effects
	seen := map[string]bool{a.ID: true}
	queue := slices.Clone(a.Team)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		c.agents.mu.Lock()
		m, ok := c.agents.byID[id]
		c.agents.mu.Unlock()
		if !ok || !m.Enabled {
			continue
		}
		queue = append(queue, m.Team...)
		m.Team = nil // walked here, not again in Agents.Effects
		all |= c.agents.Effects(m)
	}
	return all
}

// SubConversationLister is implemented by stores that find the
// conversations of the team members a turn called (store.DB).
type SubConversationLister interface {
	SubConversations(ctx context.Context, parentTurnID string) ([]Conversation, error)
}

// Subs lists the conversations of the team members the turn
// called, in the order they started; each one's ParentConversation and
// ParentTurn name the caller's. None when the store cannot say.
func (cv *Conversations) Subs(ctx context.Context, turnID string) ([]Conversation, error) {
	l, ok := cv.store.(SubConversationLister)
	if !ok {
		return nil, nil
	}
	return l.SubConversations(ctx, turnID)
}

// Team lists the agent's team members that exist, in order.
func (ags *Agents) Team(a Agent) []Agent {
	ags.mu.Lock()
	defer ags.mu.Unlock()
	var out []Agent
	for _, id := range a.Team {
		if m, ok := ags.byID[id]; ok {
			out = append(out, m)
		}
	}
	return out
}
