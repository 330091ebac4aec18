package desktop

import (
	"context"
	"slices"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// clientAgentsNote says which agents a client sees, for its row:
// "all agents", "no agents", "2 agents: researcher, scribe".
func clientAgentsNote(v agent.Visibility, err error) string {
	if err != nil {
		return "agents unknown"
	}
	return v.String()
}

// agentChoice is one agent in the Agents… dialog.
type agentChoice struct {
	Slug, Label string
	Checked     bool
}

// agentChoices are the agents to choose from, in slug order, checked
// where the client sees them (all when it sees all).
func agentChoices(agents []agent.Agent, v agent.Visibility) []agentChoice {
	out := make([]agentChoice, 0, len(agents))
	for _, a := range agents {
		label := a.Slug
		if a.Name != "" && a.Name != a.Slug {
			label = a.Name + " (" + a.Slug + ")"
		}
		out = append(out, agentChoice{Slug: a.Slug, Label: label, Checked: v.Sees(a.Slug)})
	}
	slices.SortFunc(out, func(a, b agentChoice) int {
		switch {
		case a.Slug < b.Slug:
			return -1
		case a.Slug > b.Slug:
			return 1
		}
		return 0
	})
	return out
}

// chosenAgents turns the dialog's answer into SetClientAgents' arguments:
// All, or the slugs of the labels checked, in slug order.
func chosenAgents(all bool, choices []agentChoice, checkedLabels []string) (bool, []string) {
	if all {
		return true, nil
	}
	slugs := []string{}
	for _, c := range choices {
		if slices.Contains(checkedLabels, c.Label) {
			slugs = append(slugs, c.Slug)
		}
	}
	return false, slugs
}

// clientAgents is the row's note of which agents the client sees (from
// memory).
func (v *settingsView) clientAgents(name string) string {
	return clientAgentsNote(v.core.Clients.Visibility(name))
}

// chooseAgents opens the Agents… dialog of a client: All, or each agent.
func (v *settingsView) chooseAgents(name string) {
	vis, err := v.core.Clients.Visibility(name)
	if err != nil {
		say(v.tokenStatus, "✖ "+agent.UserMessage(err))
		return
	}
	choices := agentChoices(v.core.Agents.List(), vis)
	labels := make([]string, len(choices))
	var checked []string
	for i, c := range choices {
		labels[i] = c.Label
		if c.Checked && !vis.All {
			checked = append(checked, c.Label)
		}
	}
	group := widget.NewCheckGroup(labels, nil)
	group.SetSelected(checked)
	all := widget.NewCheck("All agents, including those added later", func(on bool) {
		if on {
			group.Disable()
		} else {
			group.Enable()
		}
	})
	all.SetChecked(vis.All)
	if vis.All {
		group.Disable()
	}
	body := container.NewVBox(plainNote(name+" lists and calls only the agents it sees; to it, the others do not exist."), all, group)
	v.app.showDialog(dialog.NewCustomConfirm("Agents "+name+" sees", "Save", "Cancel", body, func(ok bool) {
		if !ok {
			return
		}
		setAll, slugs := chosenAgents(all.Checked, choices, group.Selected)
		v.setClientAgents(name, setAll, slugs)
	}, v.app.win), nil)
}

// setClientAgents saves which agents a client sees, off fyne's goroutine.
func (v *settingsView) setClientAgents(name string, all bool, slugs []string) {
	say(v.tokenStatus, "Saving the agents "+name+" sees…")
	v.app.background(func(ctx context.Context) func() {
		err := v.core.Clients.SetAgents(ctx, name, all, slugs)
		return func() {
			if err != nil {
				say(v.tokenStatus, "✖ Not saved: "+agent.UserMessage(err))
				return
			}
			say(v.tokenStatus, name+" now sees "+v.clientAgents(name)+".")
			v.refreshClients()
		}
	})
}
