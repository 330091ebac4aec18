// Package agenttest provides fakes of the core's ports for tests, in the
// manner of net/http/httptest.
package agenttest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Model is a scripted agent.Model: each Chat call runs Reply with the
// request (or echoes the last user message when Reply is nil) and records
// the request.
type Model struct {
	Reply func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error)

	mu       sync.Mutex
	requests []agent.ChatRequest
}

var _ agent.Model = (*Model)(nil)

// Chat implements agent.Model.
func (m *Model) Chat(ctx context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	m.mu.Unlock()
	if m.Reply != nil {
		return m.Reply(ctx, n, req, onDelta)
	}
	last := ""
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleUser {
			last = msg.Content
		}
	}
	onDelta(agent.Delta{Content: "echo: " + last})
	return Text("echo: " + last), nil
}

// Requests returns the requests received so far.
func (m *Model) Requests() []agent.ChatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agent.ChatRequest(nil), m.requests...)
}

// Text is a plain assistant reply.
func Text(s string) agent.ChatResponse {
	return agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant, Content: s}, Model: "fake", PromptTokens: 3, OutputTokens: 2}
}

// Calls is an assistant reply that calls one tool.
func Calls(id, name string, args any) agent.ChatResponse {
	raw, _ := json.Marshal(args)
	return agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant,
		ToolCalls: []agent.ToolCall{{ID: id, Name: name, Arguments: raw}}}, Model: "fake", PromptTokens: 3, OutputTokens: 2}
}

// Tool is a func-backed agent.Tool.
type Tool struct {
	Name string
	Fn   func(ctx context.Context, args json.RawMessage) (string, error)
	// Approval is the tool's default for needing approval.
	Approval bool
}

var _ agent.Tool = Tool{}

// Spec implements agent.Tool.
func (t Tool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: t.Name, Description: "test tool " + t.Name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

// Call implements agent.Tool.
func (t Tool) Call(ctx context.Context, _ agent.Agent, args json.RawMessage) (string, error) {
	return t.Fn(ctx, args)
}

// NeedsApprovalByDefault implements agent.ApprovalDefaulter.
func (t Tool) NeedsApprovalByDefault() bool { return t.Approval }

// Secrets is a keychain in memory; the zero value is empty and ready.
type Secrets struct {
	mu sync.Mutex
	m  map[string]string
}

var _ agent.Secrets = (*Secrets)(nil)

// Get implements agent.Secrets: agent.ErrNotFound for a missing key.
func (s *Secrets) Get(key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	if !ok {
		return "", agent.ErrNotFound
	}
	return v, nil
}

// Set implements agent.Secrets.
func (s *Secrets) Set(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]string)
	}
	s.m[key] = value
	return nil
}

// Delete implements agent.Secrets: agent.ErrNotFound for a missing key,
// as the keychain says.
func (s *Secrets) Delete(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok {
		return agent.ErrNotFound
	}
	delete(s.m, key)
	return nil
}

// ApprovalRules is an approval rule store in memory; the zero value is
// empty and ready.
type ApprovalRules struct {
	mu    sync.Mutex
	Rules []agent.ApprovalRule
}

var _ agent.ApprovalRuleStore = (*ApprovalRules)(nil)

// Approvals are the approval rules kept in s, for agents that all exist.
func (s *ApprovalRules) Approvals(ctx context.Context) (*agent.Approvals, error) {
	return agent.NewApprovals(ctx, s, func(string) bool { return true }, func(agent.Event) {}, time.Now)
}

// ApprovalRules implements agent.ApprovalRuleStore.
func (s *ApprovalRules) ApprovalRules(context.Context) ([]agent.ApprovalRule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Rules), nil
}

// PutApprovalRule implements agent.ApprovalRuleStore.
func (s *ApprovalRules) PutApprovalRule(_ context.Context, r agent.ApprovalRule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Rules = append(s.Rules, r)
	return nil
}

// DeleteApprovalRule implements agent.ApprovalRuleStore.
func (s *ApprovalRules) DeleteApprovalRule(_ context.Context, id string) error {
	return s.with(id, func(i int) { s.Rules = slices.Delete(s.Rules, i, i+1) })
}

// EnableApprovalRule implements agent.ApprovalRuleStore.
func (s *ApprovalRules) EnableApprovalRule(_ context.Context, id string) error {
	return s.with(id, func(i int) { s.Rules[i].Review = "" })
}

func (s *ApprovalRules) with(id string, f func(i int)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.Rules, func(r agent.ApprovalRule) bool { return r.ID == id })
	if i < 0 {
		return agent.ErrNotFound
	}
	f(i)
	return nil
}
