package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/deskhand/deskhand/server/control"
)

// tokenAgentsSynopsis is the usage of 'token agents'.
const tokenAgentsSynopsis = "token agents NAME [--all | SLUG...]"

func tokenFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.BoolVar(&f.all, "all", false, "token agents: let the client see every agent")
}

// runTokenAgents shows which agents a client sees (no more words), or
// sets them: --all, or the slugs given. Through the running app when
// there is one, so its clients hear list_changed at once; else on the
// store.
func runTokenAgents(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if len(words) == 0 || (f.all && len(words) > 1) {
		return usagef(usage, "usage: deskhand %s", tokenAgentsSynopsis)
	}
	name, slugs := words[0], words[1:]
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var set control.ClientAgents
	switch {
	case !f.all && len(slugs) == 0:
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
		set, err = ctl.SetClientAgents(ctx, name, f.all, slugs)
	default:
		set, err = control.SetCoreClientAgents(ctx, control.CoreOf(app.Core), name, f.all, slugs)
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
