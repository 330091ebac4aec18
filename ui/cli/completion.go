package cli

import (
	"slices"

	"github.com/spf13/cobra"
)

// completionCommand prints cobra's completion script for a shell. It
// stands in for cobra's own completion command, so that its usage and
// refusals read as the other commands'.
func completionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print the shell's completion script for deskhand",
		Long: `Print the completion script of the shell for deskhand: its commands, flags and clients.
Load it in the shell's profile, as in the examples (zsh: after compinit).`,
		Example: `  source <(deskhand completion bash)
  source <(deskhand completion zsh)
  deskhand completion fish | source
  deskhand completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(c.ValidArgs, args[0]) {
				return usagef(c, "usage: %s", synopsis(c))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			root, out := c.Root(), c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			}
			return root.GenPowerShellCompletionWithDesc(out)
		},
	}
}
