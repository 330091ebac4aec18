package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func (inv *invocation) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(inv.stdout, "deskhand %s (%s %s/%s)\n", inv.env.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
