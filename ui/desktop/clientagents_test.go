package desktop

import (
	"context"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

func (f *fakeSettings) Visibility(name string) (agent.Visibility, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	slugs, ok := f.visible[name]
	if !ok {
		return agent.Visibility{All: true}, nil
	}
	return agent.NewVisibility(slugs), nil
}

func (f *fakeSettings) SetAgents(_ context.Context, name string, all bool, slugs []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.visible == nil {
		f.visible = map[string][]string{}
	}
	if all {
		delete(f.visible, name)
	} else {
		f.visible[name] = slices.Clone(slugs)
	}
	return nil
}

// settingsWithAgents is the Settings fake with agents to choose from.
type settingsWithAgents struct {
	*fakeSettings
	agents []agent.Agent
}

func (s settingsWithAgents) asCore() Core {
	return Core{Clients: s.fakeSettings, Settings: settingsFake{fakeSettings: s.fakeSettings}, Agents: agentList{list: s.agents},
		Providers: providersFake{&fakeProviders{}, &fakeAgents{}}}
}

func TestClientAgentsNote(t *testing.T) {
	tests := []struct {
		v    agent.Visibility
		want string
	}{
		{agent.Visibility{All: true}, "all agents"},
		{agent.NewVisibility(nil), "no agents"},
		{agent.NewVisibility([]string{"scribe"}), "1 agent: scribe"},
		{agent.NewVisibility([]string{"scribe", "researcher"}), "2 agents: researcher, scribe"},
	}
	for _, tt := range tests {
		if got := clientAgentsNote(tt.v, nil); got != tt.want {
			t.Errorf("clientAgentsNote(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestAgentChoices(t *testing.T) {
	agents := []agent.Agent{{Slug: "scribe", Name: "Scribe"}, {Slug: "researcher", Name: "researcher"}, {Slug: "coder"}}
	choices := agentChoices(agents, agent.NewVisibility([]string{"scribe"}))
	want := []agentChoice{{"coder", "coder", false}, {"researcher", "researcher", false}, {"scribe", "Scribe (scribe)", true}}
	if !slices.Equal(choices, want) {
		t.Errorf("agentChoices = %v, want %v", choices, want)
	}
	if all := agentChoices(agents, agent.Visibility{All: true}); !all[0].Checked || !all[2].Checked {
		t.Errorf("with all agents, not every choice is checked: %v", all)
	}
	tests := []struct {
		all     bool
		checked []string
		wantAll bool
		want    []string
	}{
		{true, []string{"coder"}, true, nil},
		{false, []string{"Scribe (scribe)", "coder"}, false, []string{"coder", "scribe"}},
		{false, nil, false, []string{}},
	}
	for _, tt := range tests {
		gotAll, got := chosenAgents(tt.all, choices, tt.checked)
		if gotAll != tt.wantAll || !slices.Equal(got, tt.want) {
			t.Errorf("chosenAgents(%v, %v) = %v %v, want %v %v", tt.all, tt.checked, gotAll, got, tt.wantAll, tt.want)
		}
	}
}

// TestChoosingAClientsAgents: a client row says which agents it sees; its
// Agents… dialog sets them (untick All, tick researcher, Save) and the row
// says so.
func TestChoosingAClientsAgents(t *testing.T) {
	fake := &fakeSettings{clients: []agent.Client{{ID: "1", Name: "cursor"}, {ID: "2", Name: "claude"}}}
	core := settingsWithAgents{fake, []agent.Agent{{Slug: "researcher"}, {Slug: "scribe"}}}
	a, ui := newShell(t)
	a.settings = newSettingsView(a, core.asCore())
	a.win.SetContent(a.settings.content())
	v := a.settings
	v.app.win.Resize(fyne.NewSize(900, 700))
	v.refreshClients()
	ui.settle()
	if got := texts(t, v.clientRows.Objects[0]); !strings.Contains(got, "cursor") || !strings.Contains(got, "sees all agents") {
		t.Fatalf("cursor's row: %q", got)
	}
	test.Tap(buttons(t, v.clientRows.Objects[0])["Agents…"])
	top := v.app.win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog")
	}
	var all *widget.Check
	var group *widget.CheckGroup
	walk(t, top, func(o fyne.CanvasObject) bool {
		switch w := o.(type) {
		case *widget.Check:
			if w.Text == "All agents, including those added later" {
				all = w
			}
		case *widget.CheckGroup:
			group = w
			return true
		}
		return false
	})
	if all == nil || group == nil || !all.Checked || !group.Disabled() {
		t.Fatalf("dialog: all %v, group %v", all, group)
	}
	all.SetChecked(false)
	group.SetSelected([]string{"researcher"})
	test.Tap(buttons(t, top)["Save"])
	ui.settle()
	if got, _ := fake.Visibility("cursor"); got.String() != "1 agent: researcher" {
		t.Errorf("cursor sees %v, want researcher only", got)
	}
	if got, _ := fake.Visibility("claude"); !got.All {
		t.Errorf("claude sees %v, want all agents", got)
	}
	if got := texts(t, v.clientRows.Objects[0]); !strings.Contains(got, "cursor") || !strings.Contains(got, "sees 1 agent: researcher") {
		t.Errorf("cursor's row after saving: %q", got)
	}
	if got := texts(t, v.clientRows.Objects[1]); !strings.Contains(got, "claude") || !strings.Contains(got, "sees all agents") {
		t.Errorf("claude's row after saving: %q", got)
	}
}
