package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxToolServerResult caps the text a tool server's call gives the model,
// as the built-in tools' read and fetch limits do.
const MaxToolServerResult = 1 << 20

// turnRunKey carries a turn's run into its tool servers' calls, so that a
// server's question reaches the person that turn asks.
type turnRunKey struct{}

// serverTool is one tool of an attached server, in one turn.
type serverTool struct {
	c    *Core
	run  *turnRun
	info ServerTool
	name string // what the model sees
}

var _ ApprovalDefaulter = (*serverTool)(nil)

func (t *serverTool) Spec() ToolSpec {
	schema := t.info.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return ToolSpec{Name: t.name, Description: cmpString(t.info.Description, t.info.Title), Parameters: schema}
}

func cmpString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// NeedsApprovalByDefault: a server's tool may change anything unless its
// server says it is read-only.
func (t *serverTool) NeedsApprovalByDefault() bool { return !t.info.ReadOnly }

// approvalText is the approval's prompt: the server, its tool and the
// exact arguments.
func (t *serverTool) approvalText(agent Agent, args json.RawMessage) string {
	return fmt.Sprintf("The agent %q wants to run the tool %q of the tool server %s (as %s) with %s. Allow it?",
		agent.Slug, t.info.Tool, t.info.Server, t.name, string(args))
}

// Call runs the tool on its server. What the server answers is untrusted
// text for the model; a failure is a tool error the model reads.
func (t *serverTool) Call(ctx context.Context, _ Agent, args json.RawMessage) (string, error) {
	ctx = context.WithValue(ctx, turnRunKey{}, t.run)
	// The server's questions and model requests touch the turn from
	// other goroutines while this one waits: the lock orders them.
	t.run.syncWithServers()
	res, err := t.c.toolServers.running.Call(ctx, t.info.Server, t.info.Tool, args)
	t.run.syncWithServers()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		t.c.log.Info("tool server call failed", "server", t.info.Server, "tool", t.info.Tool, "err", err)
		if _, ok := err.(*UserError); !ok {
			return "", Userf(err, "the tool server %s could not run %s", t.info.Server, t.info.Tool)
		}
		return "", err
	}
	text := capText(res.Text, MaxToolServerResult)
	if res.IsError {
		return "", Userf(nil, "the tool server %s reports that %s failed: %s", t.info.Server, t.info.Tool, text)
	}
	return text, nil
}

// syncWithServers orders what the turn's goroutine did before with what
// its servers' questions do (under fromServers), and what they did with
// what it does next.
func (r *turnRun) syncWithServers() {
	r.fromServers.Lock()
	defer r.fromServers.Unlock()
}

// capText cuts text at max bytes (on a rune boundary) and says so.
func capText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	cut := max
	for cut > 0 && !utf8RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n\n[truncated: the result is %d bytes; only the first %d bytes are shown (the limit is %d bytes)]", len(text), cut, max)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// addServerTools adds the tools of the agent's attached servers to the
// turn, under their namespaced names. A server that cannot be started is
// left out (its status says why); a tool whose definition changed since it
// was attached is held: not offered, and refused if called.
func (c *Core) addServerTools(ctx context.Context, run *turnRun) {
	ts := &c.toolServers
	if ts.running == nil {
		return
	}
	ts.mu.Lock()
	atts := slices.Clone(ts.attached[run.agent.ID])
	ts.mu.Unlock()
	if len(atts) == 0 {
		return
	}
	type offered struct {
		info     ServerTool
		askFirst bool
	}
	var (
		offer []offered
		held  []HeldTool
	)
	for _, att := range atts {
		listed, err := ts.running.Tools(ctx, att.Server)
		if err != nil {
			c.log.Warn("a tool server of the agent is not available this turn", "agent", run.agent.Slug, "server", att.Server, "err", err)
			continue
		}
		for _, t := range listed {
			i := slices.IndexFunc(att.Tools, func(a AttachedTool) bool { return a.Tool == t.Tool })
			if i < 0 && !att.AllTools {
				continue
			}
			var pin AttachedTool
			if i >= 0 {
				pin = att.Tools[i]
			}
			if pin.Hash == "" || pin.Hash != t.Hash {
				held = append(held, HeldTool{Agent: run.agent.Slug, Server: t.Server, Tool: t.Tool, Old: pin.Definition, New: definitionText(t), Since: c.now()})
				continue
			}
			offer = append(offer, offered{info: t, askFirst: pin.AskFirst})
		}
	}
	refs := make([]ServerToolRef, 0, len(offer)+len(held))
	for _, o := range offer {
		refs = append(refs, ServerToolRef{o.info.Server, o.info.Tool})
	}
	for _, h := range held {
		refs = append(refs, ServerToolRef{h.Server, h.Tool})
	}
	names, err := ts.running.Names(refs)
	if err != nil {
		c.log.Error("name the agent's tool server tools", "agent", run.agent.Slug, "err", err)
		return
	}
	for _, o := range offer {
		name := names[ServerToolRef{o.info.Server, o.info.Tool}]
		if _, taken := run.tools[name]; taken || name == askUserTool || name == "" {
			continue
		}
		t := &serverTool{c: c, run: run, info: o.info, name: name}
		run.tools[name] = agentTool{Tool: t, needsApproval: o.askFirst || t.NeedsApprovalByDefault()}
	}
	if len(held) == 0 {
		return
	}
	if run.held == nil {
		run.held = map[string]string{}
	}
	for _, h := range held {
		name := names[ServerToolRef{h.Server, h.Tool}]
		why := "changed its definition since the person attached it"
		if h.Old == "" {
			why = "was not looked at by the person yet"
		}
		run.held[name] = fmt.Sprintf("the tool %s of the tool server %s %s; it is held until the person looks at it again (in Deskhand: re-pin it)", h.Tool, h.Server, why)
		k := heldKey{run.agent.ID, h.Server, h.Tool}
		ts.mu.Lock()
		before, was := ts.held[k]
		if !was || before.New != h.New || before.Old != h.Old {
			ts.held[k] = h
		}
		ts.mu.Unlock()
		if !was || before.New != h.New {
			c.log.Warn("a tool server's tool is held: its definition changed", "agent", run.agent.Slug, "server", h.Server, "tool", h.Tool)
			c.publish(Event{Kind: EventToolHeld, Agent: run.agent.Slug, Conversation: run.turn.ConversationID, Turn: run.turn.ID, Text: name})
		}
	}
}

// Elicit puts a tool server's question (elicitation) to the
// person the turn whose call it came from asks, as ask_user does. ctx is
// the call's (it carries the turn); without a turn there is nobody to
// route to and the request is declined. The requested schema must have
// one field, or one required field (text, a choice, yes/no or a number),
// which is asked (optional fields are left unset); others are declined.
// It returns the content to send back, or accepted false for a decline.
func (tsv *ToolServers) Elicit(ctx context.Context, server, message string, schema json.RawMessage) (content map[string]any, accepted bool, err error) {
	c := tsv.c
	run, _ := ctx.Value(turnRunKey{}).(*turnRun)
	if run == nil {
		c.log.Warn("a tool server asked a question outside any call of an agent's turn; declined", "server", server)
		return nil, false, nil
	}
	var s struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	var field string
	if err := json.Unmarshal(schema, &s); err == nil {
		switch {
		case len(s.Properties) == 1:
			for k := range s.Properties {
				field = k
			}
		case len(s.Required) == 1: // the others are optional: left unset
			field = s.Required[0]
		}
	}
	p, ok := s.Properties[field]
	if !ok || !slices.Contains([]string{"string", "boolean", "number", "integer"}, p.Type) {
		c.log.Warn("a tool server's question has a form Deskhand cannot show; declined", "server", server, "fields", len(s.Properties))
		return nil, false, nil
	}
	run.fromServers.Lock()
	defer run.fromServers.Unlock()
	q := Question{Kind: KindQuestion, Choices: p.Enum}
	if p.Type == "boolean" {
		q.Choices = []string{"yes", "no"}
	}
	label := strings.TrimSpace(cmpString(p.Title, cmpString(p.Description, field)))
	q.Text = fmt.Sprintf("The tool server %s (used by the agent %q) asks: %s\n(%s)", server, run.agent.Slug, strings.TrimSpace(message), label)
	a, err := c.ask(ctx, run, q)
	if err != nil {
		return nil, false, err
	}
	if a.Declined {
		return nil, false, nil
	}
	var v any = a.Text
	switch p.Type {
	case "boolean":
		v = a.Text == "yes"
	case "number", "integer":
		n, perr := strconv.ParseFloat(strings.TrimSpace(a.Text), 64)
		if perr != nil {
			return nil, false, nil
		}
		v = n
	}
	return map[string]any{field: v}, true, nil
}

// Sample answers a tool server's request for a model
// (sampling) with the model of the agent whose call it came from, for a
// server the person allowed to (AllowSampling): it spends their model.
// msgs are the server's messages (user or assistant text); the reply is
// the model's text, never given tools. Outside an agent's call it is
// refused.
func (tsv *ToolServers) Sample(ctx context.Context, server, system string, msgs []Message) (text, model string, err error) {
	c := tsv.c
	tsv.mu.Lock()
	s, ok := tsv.servers[server]
	tsv.mu.Unlock()
	if !ok || !s.AllowSampling {
		return "", "", Userf(nil, "Deskhand does not let the tool server %s use the person's model (allow sampling for it first)", server)
	}
	run, _ := ctx.Value(turnRunKey{}).(*turnRun)
	if run == nil {
		return "", "", Userf(nil, "Deskhand answers a tool server's request for a model only during an agent's call to it")
	}
	run.fromServers.Lock()
	defer run.fromServers.Unlock()
	m, err := c.modelFor(ctx, run.agent)
	if err != nil {
		return "", "", err
	}
	req := ChatRequest{Model: run.agent.Model}
	if strings.TrimSpace(system) != "" {
		req.Messages = append(req.Messages, Message{Role: RoleSystem, Content: system})
	}
	for _, msg := range msgs {
		if msg.Role != RoleUser && msg.Role != RoleAssistant {
			return "", "", Userf(nil, "a sampling message's role must be user or assistant, not %q", msg.Role)
		}
		req.Messages = append(req.Messages, Message{Role: msg.Role, Content: msg.Content})
	}
	if len(req.Messages) == 0 {
		return "", "", Userf(nil, "the sampling request has no message")
	}
	c.log.Info("a tool server uses the agent's model", "server", server, "agent", run.agent.Slug, "messages", len(msgs))
	resp, err := m.Chat(ctx, req, func(Delta) {})
	if err != nil {
		return "", "", err
	}
	run.turn.PromptTokens += resp.PromptTokens
	run.turn.OutputTokens += resp.OutputTokens
	return resp.Message.Content, cmpString(resp.Model, run.agent.Model), nil
}
