package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/control"
)

func (inv *invocation) tokenAgentsCommand() *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "agents NAME [--all | SLUG...]",
		Short: "show which agents the client sees, or let it see all (--all) or those named",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || (all && len(args) > 1) {
				return usagef(c, "usage: %s", synopsis(c))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return inv.tokenAgents(cmd.Context(), all, args[0], args[1:])
		},
	}
	c.Flags().BoolVar(&all, "all", false, "let the client see every agent")
	return c
}

// tokenAgents shows which agents a client sees (no slugs, not all), or
// sets them: all, or the slugs given. Through the running app when there
// is one, so its clients hear list_changed at once; else on the store.
func (inv *invocation) tokenAgents(ctx context.Context, all bool, name string, slugs []string) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var set control.ClientAgents
	switch {
	case !all && len(slugs) == 0:
		if ctl != nil {
			set, err = ctl.ClientAgents(ctx, name)
		} else {
			set, err = control.CoreClientAgents(control.CoreOf(app.Core), name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(inv.stdout, "%s sees %s\n", name, set)
		return nil
	case ctl != nil:
		set, err = ctl.SetClientAgents(ctx, name, all, slugs)
	default:
		set, err = control.SetCoreClientAgents(ctx, control.CoreOf(app.Core), name, all, slugs)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.stdout, "%s now sees %s\n", name, set)
	return nil
}

// agentsColumn is a client's agents in 'token list'.
func agentsColumn(t control.TokenInfo) string {
	if t.Agents == nil {
		return "all agents"
	}
	return t.Agents.String()
}
