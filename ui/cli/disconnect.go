package cli

import "github.com/spf13/cobra"

func (inv *invocation) disconnectCommand() *cobra.Command {
	f := &connectFlags{}
	c := &cobra.Command{
		Use:       "disconnect CLIENT...|--all",
		Short:     "remove Deskhand's entry and revoke that client's token",
		ValidArgs: clientList(),
		RunE: func(cmd *cobra.Command, words []string) error {
			return inv.connect(cmd.Context(), f, true, words)
		},
	}
	f.register(c, true)
	return c
}
