package control_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestApprovalRulesThroughTheSocket: an "always allow" answered over the
// socket becomes a rule, listed with its agent's slug and revoked there.
func TestApprovalRulesThroughTheSocket(t *testing.T) {
	model := &agenttest.Model{Reply: func(_ context.Context, _ int, req agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			return agenttest.Text(last.Content), nil
		}
		return agenttest.Calls("w", "write_file", map[string]any{"path": "a.txt"}), nil
	}}
	tool := agenttest.Tool{Name: "write_file", Approval: true, Fn: func(context.Context, json.RawMessage) (string, error) { return "written", nil }}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Desktop: true, Tools: []agent.Tool{tool},
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: "m", Enabled: true,
		Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}}); err != nil {
		t.Fatal(err)
	}
	c := dialed(t, core)
	events := core.Events().Subscribe(t.Context(), agent.EventQuestionAsked)
	done := make(chan error, 1)
	go func() {
		_, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "scribe", Principal: "p", Message: "write"})
		done <- err
	}()
	id := (<-events).Question
	if err := c.Answer(t.Context(), id, map[string]any{"approve": true, "remember": "always", "host": "Example.com"}, false); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rules, err := c.ApprovalRules(t.Context())
	if err != nil || len(rules) != 1 || rules[0].AgentSlug != "scribe" || rules[0].Host != "example.com" || rules[0].Tool != "write_file" {
		t.Fatalf("rules = %+v, %v", rules, err)
	}
	if err := c.RevokeApprovalRule(t.Context(), rules[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := c.RevokeApprovalRule(t.Context(), rules[0].ID); err == nil || !strings.Contains(agent.UserMessage(err), "no approval rule") {
		t.Errorf("revoking it again: %v", err)
	}
	if rules, _ := c.ApprovalRules(t.Context()); len(rules) != 0 {
		t.Errorf("rules after the revoke: %+v", rules)
	}
}

// TestRuleEnabledThroughTheSocket: a rule that waits for review is listed
// with why, and enabled through the socket it is on.
func TestRuleEnabledThroughTheSocket(t *testing.T) {
	db := storetest.Open(t)
	first, err := agent.New(t.Context(), agent.Config{History: db})
	if err != nil {
		t.Fatal(err)
	}
	a, err := first.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: "m"})
	first.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutApprovalRule(t.Context(), agent.ApprovalRule{ID: "old", Agent: a.ID, Tool: "write_file", CreatedBy: agent.ByClient, Review: agent.ReviewUnpinned}); err != nil {
		t.Fatal(err)
	}
	core, err := agent.New(t.Context(), agent.Config{History: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	c := dialed(t, core)
	if rules, err := c.ApprovalRules(t.Context()); err != nil || len(rules) != 1 || rules[0].Review != agent.ReviewUnpinned {
		t.Fatalf("rules = %+v, %v", rules, err)
	}
	if err := c.EnableApprovalRule(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	if rules, _ := c.ApprovalRules(t.Context()); len(rules) != 1 || rules[0].Review != "" {
		t.Errorf("rules after enabling: %+v", rules)
	}
	if err := c.EnableApprovalRule(t.Context(), "nothing"); err == nil || !strings.Contains(agent.UserMessage(err), "no approval rule") {
		t.Errorf("enabling a rule that does not exist: %v", err)
	}
}
