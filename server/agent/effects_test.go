package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

func ptr(b bool) *bool { return &b }

// TestDeriveHints: an agent's annotations from the effects of what it
// can reach: built-in tools, a tool server's tools (by their own
// annotations) and other agents (by their own derivation).
func TestDeriveHints(t *testing.T) {
	var (
		reads  = agent.EffectReads
		writes = agent.EffectWrites
		fetch  = agent.EffectFetches | agent.EffectSends
		// A tool server's tools.
		unmarked       = agent.EffectsFromHints(nil, nil, nil)
		readOnlyLocal  = agent.EffectsFromHints(ptr(true), nil, ptr(false))
		readOnlyWeb    = agent.EffectsFromHints(ptr(true), nil, nil) // open world by the spec's default
		additive       = agent.EffectsFromHints(ptr(false), ptr(false), ptr(false))
		notReadOnlyYet = agent.EffectsFromHints(ptr(false), nil, ptr(false))
		// Other agents, as their own union.
		readerAgent = agent.UnionEffects(reads, readOnlyLocal)
		writerAgent = agent.UnionEffects(reads, writes)
	)
	tests := []struct {
		name    string
		effects []agent.Effects
		want    agent.ToolHints
	}{
		{"no tools", nil, agent.ToolHints{ReadOnly: true}},
		{"clock only", []agent.Effects{0}, agent.ToolHints{ReadOnly: true}},
		{"reads files", []agent.Effects{reads, reads}, agent.ToolHints{ReadOnly: true}},
		{"writes files", []agent.Effects{reads, writes}, agent.ToolHints{Destructive: true}},
		{"fetches", []agent.Effects{fetch}, agent.ToolHints{OpenWorld: true}},
		{"writes and fetches", []agent.Effects{writes, fetch, reads}, agent.ToolHints{Destructive: true, OpenWorld: true}},
		{"tool server tool without annotations", []agent.Effects{unmarked}, agent.ToolHints{Destructive: true, OpenWorld: true}},
		{"tool server tool read-only, closed world", []agent.Effects{readOnlyLocal, reads}, agent.ToolHints{ReadOnly: true}},
		{"tool server tool read-only, open world", []agent.Effects{readOnlyWeb}, agent.ToolHints{ReadOnly: true, OpenWorld: true}},
		{"tool server tool additive", []agent.Effects{additive}, agent.ToolHints{}},
		{"tool server tool not read-only, destructive by default", []agent.Effects{notReadOnlyYet}, agent.ToolHints{Destructive: true}},
		{"read-only agent", []agent.Effects{readerAgent}, agent.ToolHints{ReadOnly: true}},
		{"writing agent", []agent.Effects{reads, writerAgent}, agent.ToolHints{Destructive: true}},
		{"unknown tool", []agent.Effects{agent.EffectsUnknown}, agent.ToolHints{Destructive: true, OpenWorld: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.DeriveHints(tt.effects...); got != tt.want {
				t.Errorf("DeriveHints = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// silentTool says nothing of its effects.
type silentTool struct{ name string }

func (s silentTool) Spec() agent.ToolSpec {
	return agent.ToolSpec{Name: s.name, Description: "x", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (silentTool) Call(context.Context, agent.Agent, json.RawMessage) (string, error) { return "", nil }

type effectsTool struct {
	silentTool
	effects agent.Effects
}

func (e effectsTool) Effects() agent.Effects { return e.effects }

// TestAgentHints: the core derives an agent's hints from the tools it
// switched on, a tool that does not say counting as doing anything, and
// a name not in the catalog as nothing (it cannot run).
func TestAgentHints(t *testing.T) {
	core := newFixture(t, agent.Config{Tools: []agent.Tool{
		effectsTool{silentTool{"reader"}, agent.EffectReads},
		effectsTool{silentTool{"writer"}, agent.EffectWrites},
		silentTool{"mystery"},
	}}, agent.Agent{}).core
	tests := []struct {
		tools []string
		want  agent.ToolHints
	}{
		{nil, agent.ToolHints{ReadOnly: true}},
		{[]string{"reader"}, agent.ToolHints{ReadOnly: true}},
		{[]string{"reader", "gone"}, agent.ToolHints{ReadOnly: true}},
		{[]string{"reader", "writer"}, agent.ToolHints{Destructive: true}},
		{[]string{"mystery"}, agent.ToolHints{Destructive: true, OpenWorld: true}},
	}
	for _, tt := range tests {
		var a agent.Agent
		for _, n := range tt.tools {
			a.Tools = append(a.Tools, agent.AgentTool{Name: n})
		}
		if got := core.Agents().Hints(a); got != tt.want {
			t.Errorf("tools %v: hints %+v, want %+v", tt.tools, got, tt.want)
		}
	}
	infos := map[string]agent.Effects{}
	for _, info := range core.Agents().AvailableTools() {
		infos[info.Name] = info.Effects
	}
	if infos["writer"] != agent.EffectWrites || infos["mystery"] != agent.EffectsUnknown {
		t.Errorf("AvailableTools effects = %v", infos)
	}
}
