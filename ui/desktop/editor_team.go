package desktop

import (
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// teamPicker is the editor's choice of the agents an agent may hand work
// to: a check for each other agent. A team that would call itself round
// is refused when the agent is saved, with the cycle named.
type teamPicker struct {
	box     *fyne.Container
	checks  *widget.CheckGroup
	ids     map[string]string // agent ID by the label shown
	labels  map[string]string // the label shown by agent ID
	saved   []string          // the team of the agent shown, in its order
	loading bool
}

func newTeamPicker(changed func()) *teamPicker {
	p := &teamPicker{box: container.NewVBox()}
	p.checks = widget.NewCheckGroup(nil, func([]string) {
		if !p.loading {
			changed()
		}
	})
	p.box.Add(p.checks)
	return p
}

// show offers the agents but a itself, with a's team checked.
func (p *teamPicker) show(a agent.Agent, agents []agent.Agent) {
	p.loading = true
	defer func() { p.loading = false }()
	p.ids, p.labels, p.saved = map[string]string{}, map[string]string{}, slices.Clone(a.Team)
	var options, selected []string
	for _, other := range agents {
		if other.ID == a.ID && a.ID != "" {
			continue
		}
		label := agentLabel(other)
		p.ids[label], p.labels[other.ID] = other.ID, label
		options = append(options, label)
	}
	for _, id := range a.Team {
		if l, ok := p.labels[id]; ok {
			selected = append(selected, l)
		}
	}
	p.checks.Options = options
	p.checks.SetSelected(selected)
	p.checks.Refresh()
	if len(options) == 0 {
		p.checks.Hide()
	} else {
		p.checks.Show()
	}
}

// value is the team checked: the saved members still checked, in their
// order, then those newly checked, in the list's.
func (p *teamPicker) value() []string {
	checked := map[string]bool{}
	for _, l := range p.checks.Selected {
		checked[p.ids[l]] = true
	}
	var out []string
	for _, id := range p.saved {
		if checked[id] {
			out = append(out, id)
			delete(checked, id)
		}
	}
	for _, l := range p.checks.Options {
		if id := p.ids[l]; checked[id] {
			out = append(out, id)
		}
	}
	return out
}
