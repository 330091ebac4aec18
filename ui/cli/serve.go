package cli

import "github.com/spf13/cobra"

func (inv *invocation) serveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "serve the agents headless on http://ADDR/mcp until stopped (Ctrl-C)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return inv.env.Serve(cmd.Context(), inv.g, inv.stderr)
		},
	}
}
