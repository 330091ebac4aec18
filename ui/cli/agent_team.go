package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deskhand/deskhand/server/agent"
)

// teamFlags registers --team and --no-team of agent add and edit.
func teamFlags(fs *pflag.FlagSet, f *agentFields) {
	fs.StringVar(&f.team, "team", "", "the agents it may hand work to, by slug, comma-separated, in order (each is offered to its model as the tool agent_SLUG)")
	fs.BoolVar(&f.noTeam, "no-team", false, "take its team away")
}

// applyTeam sets the agent's team from --team (slugs, turned into IDs
// from the agents listed) or --no-team. An unknown slug is refused, naming
// it; cycles are refused by the core when the agent is saved.
func applyTeam(cmd *cobra.Command, f *agentFields, list []agent.Agent, a *agent.Agent) error {
	given := cmd.Flags().Changed
	switch {
	case given("team") && given("no-team"):
		return usagef(cmd, "give --team or --no-team, not both")
	case given("no-team") && f.noTeam:
		a.Team = nil
	case given("team"):
		var ids, unknown []string
		for _, slug := range strings.FieldsFunc(f.team, func(r rune) bool { return r == ',' || r == ' ' }) {
			if m := findAgent(list, slug); m != nil {
				ids = append(ids, m.ID)
			} else {
				unknown = append(unknown, slug)
			}
		}
		if len(unknown) > 0 {
			return agent.Userf(agent.ErrNotFound, "no agent named %s to put in the team; see 'deskhand agent list'", strings.Join(unknown, ", "))
		}
		a.Team = ids
	}
	return nil
}

// teamSlugs is the agent's team as slugs, comma-separated; "-" for none.
func teamSlugs(list []agent.Agent, a agent.Agent) string {
	if len(a.Team) == 0 {
		return "-"
	}
	slugs := make([]string, 0, len(a.Team))
	for _, id := range a.Team {
		for _, m := range list {
			if m.ID == id {
				slugs = append(slugs, m.Slug)
			}
		}
	}
	return strings.Join(slugs, ",")
}
