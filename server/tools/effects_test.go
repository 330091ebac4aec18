package tools_test

import (
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

// TestToolEffects pins what each built-in tool says it can do: every one
// says (none falls back to "anything"), and the agent annotations derived
// from it are what a client should see of an agent with only that tool.
func TestToolEffects(t *testing.T) {
	want := map[string]struct {
		effects agent.Effects
		hints   agent.ToolHints
	}{
		tools.NameCurrentTime: {0, agent.ToolHints{ReadOnly: true}},
		tools.NameReadFile:    {agent.EffectReads, agent.ToolHints{ReadOnly: true}},
		tools.NameListDir:     {agent.EffectReads, agent.ToolHints{ReadOnly: true}},
		tools.NameWriteFile:   {agent.EffectWrites, agent.ToolHints{Destructive: true}},
		tools.NameFetchURL:    {agent.EffectFetches | agent.EffectSends, agent.ToolHints{OpenWorld: true}},
	}
	catalog := tools.Catalog(tools.Options{})
	if len(catalog) != len(want) {
		t.Errorf("%d tools, %d with effects pinned here: pin the new one", len(catalog), len(want))
	}
	for _, tl := range catalog {
		name := tl.Spec().Name
		if _, ok := tl.(agent.EffectsDescriber); !ok {
			t.Errorf("%s does not say what it can do", name)
			continue
		}
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: effects not pinned", name)
			continue
		}
		if got := agent.EffectsOf(tl); got != w.effects {
			t.Errorf("%s: effects %b, want %b", name, got, w.effects)
		}
		if got := agent.DeriveHints(agent.EffectsOf(tl)); got != w.hints {
			t.Errorf("%s: hints %+v, want %+v", name, got, w.hints)
		}
	}
}
