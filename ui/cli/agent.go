package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
)

// agentEditor is what 'deskhand agent' needs: the running app's control
// channel, so clients hear of changes at once, or the core over the store.
type agentEditor interface {
	SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetAgentEnabled(ctx context.Context, slug string, enabled bool) error
	DeleteAgent(ctx context.Context, slug string) error
}

func (inv *invocation) agentCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "agent COMMAND",
		Short: "list, add, change, enable, disable and remove agents",
		Long: `List, add, change, enable, disable and remove the agents: each is a tool the clients
see. While the app runs, clients hear of every change at once.`,
	}
	enable := func(use, short string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " SLUG",
			Short: short,
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withAgents(cmd.Context(), func(editor agentEditor, _ func() ([]agent.Agent, error)) error {
					if err := editor.SetAgentEnabled(cmd.Context(), args[0], on); err != nil {
						return err
					}
					fmt.Fprintf(inv.stderr, "%s %sd.\n", args[0], use)
					return nil
				})
			},
		}
	}
	c.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "list the agents",
			Args:  exactly(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return inv.withAgents(cmd.Context(), func(_ agentEditor, agents func() ([]agent.Agent, error)) error {
					list, err := agents()
					if err != nil {
						return err
					}
					printAgents(inv.stdout, list)
					return nil
				})
			},
		},
		inv.agentSaveCommand("add"),  // agent_edit.go
		inv.agentSaveCommand("edit"), // agent_edit.go
		enable("enable", "put an agent on the tool list", true),
		enable("disable", "take an agent off the tool list", false),
		&cobra.Command{
			Use:   "remove SLUG",
			Short: "delete an agent and its conversations",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withAgents(cmd.Context(), func(editor agentEditor, _ func() ([]agent.Agent, error)) error {
					if err := editor.DeleteAgent(cmd.Context(), args[0]); err != nil {
						return err
					}
					fmt.Fprintf(inv.stderr, "Removed %s and its conversations.\n", args[0])
					return nil
				})
			},
		},
	)
	return c
}

// withAgents runs do with the running app's agents when there is one,
// else with the data folder's.
func (inv *invocation) withAgents(ctx context.Context, do func(editor agentEditor, agents func() ([]agent.Agent, error)) error) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var (
		editor agentEditor
		agents func() ([]agent.Agent, error)
	)
	if ctl != nil {
		editor, agents = ctl, func() ([]agent.Agent, error) { return ctl.Agents(ctx) }
	} else {
		editor, agents = localAgents{app.Core.Agents()}, func() ([]agent.Agent, error) { return app.Core.Agents().List(), nil }
	}
	return do(editor, agents)
}

func findAgent(list []agent.Agent, slug string) *agent.Agent {
	for i := range list {
		if list[i].Slug == slug {
			return &list[i]
		}
	}
	return nil
}

func printAgents(w io.Writer, list []agent.Agent) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tNAME\tENABLED\tBACKEND\tPROVIDER\tMODEL\tTEAM")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\t%s\n", a.Slug, a.Name, a.Enabled, a.Backend, cmp.Or(a.Provider, agent.OllamaProvider), a.Model, teamSlugs(list, a))
	}
	tw.Flush()
}
