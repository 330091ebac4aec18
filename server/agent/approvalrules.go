package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ByRule marks an approval given by a stored approval rule, not asked.
const ByRule Answerer = "rule"

// ApprovalRule lets an agent run a tool without asking: "always allow".
// It never widens what the agent may do (its folders and hosts still
// apply first); it only skips the question for calls it covers: the
// agent and the tool match, the client if the rule names one, and the
// call's decoded path is inside Folder, or its host equals Host. A rule
// with neither Folder nor Host covers every call of the tool by the agent.
// A rule a client made by answering covers that client only; only the
// person (the desktop, the command line) makes rules for every client.
type ApprovalRule struct {
	ID        string
	Agent     string // the agent's ID (it survives a change of slug)
	Tool      string
	Client    string // a client's ID (a principal); "" for every client
	Folder    string // absolute, cleaned, links resolved; "" for any path
	Host      string // lower case; "" for any host
	CreatedAt time.Time
	CreatedBy Answerer // who answered "always allow"
	// Review says why the rule is off until the person looks at it
	// (ReviewUnpinned); "" while it is on.
	Review string
}

// ReviewUnpinned turns off, at the upgrade that pinned clients' rules, a
// rule a client made for every client before they were pinned (store
// migration 0014): the person re-enables it for every client, or deletes it.
const ReviewUnpinned = "made by a client before rules were pinned: review"

// ApprovalRuleStore keeps approval rules (store/). The core uses it when
// its History implements it; otherwise rules last until the process ends.
type ApprovalRuleStore interface {
	ApprovalRules(ctx context.Context) ([]ApprovalRule, error)
	PutApprovalRule(ctx context.Context, r ApprovalRule) error
	// DeleteApprovalRule removes it; ErrNotFound if there is none.
	DeleteApprovalRule(ctx context.Context, id string) error
	// EnableApprovalRule clears its Review; ErrNotFound if there is none.
	EnableApprovalRule(ctx context.Context, id string) error
}

// ApprovalScope is where a call's decoded arguments reach, as the tool
// will resolve them for the agent.
type ApprovalScope struct {
	Path   string // file tools: the absolute path, links resolved
	Folder string // file tools: the folder an "always allow here" covers
	Host   string // fetch_url: the URL's host, lower case
}

// ApprovalScoper is implemented by tools whose approval rules can be
// narrowed to a folder or a host (the file tools, fetch_url). An error
// means the scope cannot be said (the path is outside the agent's
// folders, say): then only rules with neither folder nor host cover the
// call, and the tool refuses it when it runs.
type ApprovalScoper interface {
	ApprovalScope(a Agent, args json.RawMessage) (ApprovalScope, error)
}

// Remember is what an approval's optional "remember" field asks for.
type Remember string

const (
	RememberOnce   Remember = "once"          // allow this call only (the default)
	RememberAgent  Remember = "always"        // always allow this tool for this agent
	RememberClient Remember = "always_client" // … when this client calls
	RememberFolder Remember = "always_folder" // … inside this folder
	RememberHost   Remember = "always_host"   // … on this host
)

// RuleRequest is an approval's "always allow": the narrowing asked for.
// The zero value covers every call of the tool by the agent.
type RuleRequest struct {
	Client bool   // only for the client that called
	Folder string // only inside this absolute folder
	Host   string // only on this host
}

// rememberChoices are the "remember" values a question offers.
func (q Question) rememberChoices() []string {
	out := []string{string(RememberOnce), string(RememberAgent), string(RememberClient)}
	if q.Scope.Folder != "" {
		out = append(out, string(RememberFolder))
	}
	if q.Scope.Host != "" {
		out = append(out, string(RememberHost))
	}
	return out
}

// rememberField is the approval form's optional "remember" property.
func (q Question) rememberField() map[string]any {
	desc := "Optional: 'once' (the default) allows this call only; 'always' always allows " + q.Tool + " for this agent when this client calls; 'always_client' the same"
	if q.Scope.Folder != "" {
		desc += "; 'always_folder' only inside " + q.Scope.Folder
	}
	if q.Scope.Host != "" {
		desc += "; 'always_host' only on " + q.Scope.Host
	}
	return map[string]any{"type": "string", "title": "Remember", "description": desc, "enum": q.rememberChoices()}
}

// parseApproval reads an approval form: {approve, comment?, remember?}.
// The desktop (popup, command line) may also narrow a rule itself with
// "client" (true or false), "folder" and "host", given with remember
// "always". A denial is never remembered.
func (q Question) parseApproval(content map[string]any, by Answerer) (Answer, error) {
	a := Answer{By: by}
	desktopOnly := []string{"client", "folder", "host"}
	for k := range content {
		switch {
		case k == "approve" || k == "comment" || k == "remember":
		case by == ByDesktop && slices.Contains(desktopOnly, k):
		default:
			return Answer{}, Userf(nil, "unexpected field %q: an approval takes 'approve' (true or false), an optional 'comment' and an optional 'remember'", k)
		}
	}
	approve, ok := content["approve"].(bool)
	if !ok {
		return Answer{}, Userf(nil, "'approve' must be true or false")
	}
	a.Approve = approve
	if c, present := content["comment"]; present && c != nil {
		s, ok := c.(string)
		if !ok {
			return Answer{}, Userf(nil, "'comment' must be text")
		}
		a.Comment = s
	}
	remember := RememberOnce
	if r, present := content["remember"]; present && r != nil {
		s, ok := r.(string)
		if !ok || !slices.Contains(q.rememberChoices(), s) {
			return Answer{}, Userf(nil, "'remember' must be one of %s", strings.Join(q.rememberChoices(), ", "))
		}
		remember = Remember(s)
	}
	var req RuleRequest
	switch remember {
	case RememberClient:
		req.Client = true
	case RememberFolder:
		req.Folder = q.Scope.Folder
	case RememberHost:
		req.Host = q.Scope.Host
	}
	extra := false
	if v, present := content["client"]; present && v != nil {
		b, ok := v.(bool)
		if !ok {
			return Answer{}, Userf(nil, "'client' must be true or false")
		}
		req.Client, extra = req.Client || b, extra || b
	}
	for _, k := range []string{"folder", "host"} {
		v, present := content[k]
		if !present || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return Answer{}, Userf(nil, "'%s' must be text", k)
		}
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		extra = true
		if k == "folder" {
			req.Folder = s
		} else {
			req.Host = s
		}
	}
	if extra && remember == RememberOnce {
		return Answer{}, Userf(nil, "'client', 'folder' and 'host' narrow an 'always' answer; give 'remember' too")
	}
	if remember == RememberOnce || !approve {
		return a, nil
	}
	if err := req.check(); err != nil {
		return Answer{}, err
	}
	a.Remember = &req
	return a, nil
}

// check refuses a narrowing that could not match what the tools run.
func (r *RuleRequest) check() error {
	if r.Folder != "" {
		if strings.ContainsRune(r.Folder, 0) || !filepath.IsAbs(r.Folder) {
			return Userf(nil, "the folder %q of an 'always allow' must be an absolute path", r.Folder)
		}
		r.Folder = filepath.Clean(r.Folder)
	}
	if r.Host != "" {
		h := strings.ToLower(strings.TrimSpace(r.Host))
		if strings.ContainsAny(h, "/:@ ?#") && !strings.HasPrefix(h, "[") {
			return Userf(nil, "the host %q of an 'always allow' must be a host name or address alone, such as example.com (no scheme, port or path)", r.Host)
		}
		r.Host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	return nil
}

// resolveFolder resolves a rule's folder as the file tools resolve paths
// (links followed), so that a link to the folder and the folder match
// alike; a folder that does not exist (yet) is kept as given.
func resolveFolder(folder string) string {
	if folder == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(folder); err == nil {
		return real
	}
	return folder
}

// inFolder reports whether the absolute, clean path p is folder or lies
// inside it: /home/a/notes covers /home/a/notes/x, never /home/a/notes2.
func inFolder(folder, p string) bool {
	if folder == "" || p == "" || !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(folder, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// covers reports whether the rule lets the call run without asking.
func (r ApprovalRule) covers(agentID, tool, principal string, s ApprovalScope, scoped bool) bool {
	if r.Review != "" || r.Agent != agentID || r.Tool != tool || (r.Client != "" && r.Client != principal) {
		return false
	}
	if r.Folder == "" && r.Host == "" {
		return true
	}
	if !scoped {
		return false
	}
	if r.Folder != "" && !inFolder(r.Folder, s.Path) {
		return false
	}
	if r.Host != "" && !strings.EqualFold(r.Host, s.Host) {
		return false
	}
	return true
}

// Approvals are the approval rules: the rules answers make, the calls
// they let run without asking, and the person's list, revocation and
// re-enabling of them. Core.Approvals hands it out. Changes go one at a
// time, the store first; it is safe for concurrent use and holds no lock
// across a store write.
type Approvals struct {
	store   ApprovalRuleStore       // nil: rules last until the process ends
	exists  func(agent string) bool // whether the agent of this ID exists
	publish func(Event)
	now     func() time.Time

	writes sync.Mutex // one change at a time, store then memory
	mu     sync.Mutex
	list   []ApprovalRule // oldest first
}

// NewApprovals keeps the rules in store (nil: in memory only), starting
// with those it holds; exists tells which agents exist (their rules alone
// are listed) and publish hears every change.
func NewApprovals(ctx context.Context, store ApprovalRuleStore, exists func(agentID string) bool, publish func(Event), now func() time.Time) (*Approvals, error) {
	a := &Approvals{store: store, exists: exists, publish: publish, now: now}
	if store == nil {
		return a, nil
	}
	list, err := store.ApprovalRules(ctx)
	if err != nil {
		return nil, fmt.Errorf("load approval rules: %w", err)
	}
	a.list = list
	return a, nil
}

// Approvals are the approval rules.
func (c *Core) Approvals() *Approvals { return c.approvals }

// Rules lists the approval rules of the agents that exist, oldest first
// (the store deletes an agent's rules with it).
func (a *Approvals) Rules(context.Context) ([]ApprovalRule, error) {
	a.mu.Lock()
	list := slices.Clone(a.list)
	a.mu.Unlock()
	return slices.DeleteFunc(list, func(r ApprovalRule) bool { return !a.exists(r.Agent) }), nil
}

// Revoke deletes a rule: the next call it covered asks again. A rule that
// does not exist is ErrNotFound.
func (a *Approvals) Revoke(ctx context.Context, id string) error {
	return a.change(ctx, id, "revoke", func(store ApprovalRuleStore) error {
		if err := store.DeleteApprovalRule(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	}, func(list []ApprovalRule, i int) []ApprovalRule { return slices.Delete(list, i, i+1) })
}

// Enable turns on a rule that waits for review, for every client it names
// (all when none): the person's decision, from the desktop or the command
// line. A rule that does not exist is ErrNotFound.
func (a *Approvals) Enable(ctx context.Context, id string) error {
	return a.change(ctx, id, "enable", func(store ApprovalRuleStore) error { return store.EnableApprovalRule(ctx, id) },
		func(list []ApprovalRule, i int) []ApprovalRule {
			list[i].Review = ""
			return list
		})
}

// change changes the rule id in the store (stored; none when rules live
// in memory only), then in memory (apply, given the rule's index); a rule
// that does not exist is ErrNotFound.
func (a *Approvals) change(ctx context.Context, id, what string, stored func(ApprovalRuleStore) error, apply func(list []ApprovalRule, i int) []ApprovalRule) error {
	a.writes.Lock()
	defer a.writes.Unlock()
	find := func() int { return slices.IndexFunc(a.list, func(r ApprovalRule) bool { return r.ID == id }) }
	a.mu.Lock()
	i := find()
	a.mu.Unlock()
	if i < 0 {
		return Userf(ErrNotFound, "there is no approval rule %q; 'deskhand approvals list' lists them", id)
	}
	if a.store != nil {
		if err := stored(a.store); err != nil {
			return fmt.Errorf("%s approval rule %s: %w", what, id, err)
		}
	}
	a.mu.Lock()
	if i := find(); i >= 0 {
		a.list = apply(a.list, i)
	}
	a.mu.Unlock()
	a.publish(Event{Kind: EventApprovalRulesChanged, Text: id})
	return nil
}

// add stores the rule an "always allow" answer to q asked for.
func (a *Approvals) add(ctx context.Context, q Question, agentID string, ans Answer) (ApprovalRule, error) {
	req := *ans.Remember
	r := ApprovalRule{
		ID: uuid.NewString(), Agent: agentID, Tool: q.Tool,
		Folder: resolveFolder(req.Folder), Host: req.Host,
		CreatedAt: a.now(), CreatedBy: ans.By,
	}
	if req.Client || ans.By != ByDesktop {
		r.Client = q.Principal // a client's "always" is its own
	}
	a.writes.Lock()
	defer a.writes.Unlock()
	if a.store != nil {
		if err := a.store.PutApprovalRule(ctx, r); err != nil {
			return ApprovalRule{}, fmt.Errorf("store approval rule: %w", err)
		}
	}
	a.mu.Lock()
	a.list = append(a.list, r)
	a.mu.Unlock()
	a.publish(Event{Kind: EventApprovalRulesChanged, Agent: q.Agent, Text: r.ID})
	return r, nil
}

// ruleFor returns the oldest rule that covers the call, if any.
func (a *Approvals) ruleFor(agentID, tool, principal string, s ApprovalScope, scoped bool) (ApprovalRule, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.list {
		if r.covers(agentID, tool, principal, s, scoped) {
			return r, true
		}
	}
	return ApprovalRule{}, false
}

// approvalScope asks the tool where the decoded arguments reach.
func approvalScope(t Tool, a Agent, args json.RawMessage) (ApprovalScope, bool) {
	sc, ok := t.(ApprovalScoper)
	if !ok {
		return ApprovalScope{}, false
	}
	s, err := sc.ApprovalScope(a, args)
	if err != nil {
		return ApprovalScope{}, false
	}
	return s, true
}

// approvedByRule records a call that a rule let run without asking, as an
// approval answered by the rule, so that transcripts show it.
func (c *Core) approvedByRule(ctx context.Context, run *turnRun, q Question, r ApprovalRule) {
	agent, turn := run.agent, run.turn
	run.asked++
	now := c.now()
	q.ID = uuid.NewString()
	q.Agent, q.ConversationID, q.TurnID, q.Principal = agent.Slug, turn.ConversationID, turn.ID, turn.Principal
	q.Seq = run.asked
	q.AskedAt, q.ExpiresAt = now, now
	q.Status = QuestionAnswered
	q.Answer = &Answer{Approve: true, By: ByRule, At: now, Rule: r.ID}
	if err := c.questions.store.PutQuestion(context.WithoutCancel(ctx), q); err != nil {
		c.log.Error("record an approval by rule", "rule", r.ID, "err", err)
	}
}
