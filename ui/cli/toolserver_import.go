package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/connect"
)

func (inv *invocation) toolServerImportCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "import [CLIENT...]",
		Short: "register the MCP servers your clients know; secrets to the keychain",
		Long: `Register the MCP servers the clients' config files name (every client's, or those named),
Deskhand's own entries left out; their secrets go to the keychain. A server whose secret
sits in its arguments or URL, or whose values the client fills in, is left, with what to do.`,
		ValidArgs: clientList(),
		RunE: func(cmd *cobra.Command, clients []string) error {
			return inv.importToolServers(cmd.Context(), dryRun, clients)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be registered, register nothing")
	return c
}

// importToolServers runs 'deskhand toolserver import [--dry-run]
// [CLIENT…]': the MCP servers the person's clients know, Deskhand's own
// entries left out, registered with their secrets in the keychain.
func (inv *invocation) importToolServers(ctx context.Context, dryRun bool, clients []string) error {
	env, err := connect.DefaultEnv()
	if err != nil {
		return agent.Userf(err, "cannot find your home folder")
	}
	opts := connect.ImportOptions{URLs: []string{inv.endpointURL(inv.g.Addr)}}
	if exe, err := inv.env.Executable(); err == nil {
		opts.Commands = []string{exe}
	}
	for _, id := range clients {
		c, ok := connect.Lookup(id)
		if !ok {
			return userf("unknown client %q", id)
		}
		opts.Clients = append(opts.Clients, c)
	}
	keeper, done, err := inv.reachToolServers(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, err := connect.ImportServers(ctx, importTarget{keeper}, env, opts, dryRun)
	if err != nil {
		return err
	}
	printImport(inv.stdout, r)
	switch {
	case dryRun:
		fmt.Fprintln(inv.stderr, "Dry run: nothing was registered.")
	case r.Imported > 0:
		fmt.Fprintf(inv.stderr, "Registered %d tool server(s); their secrets are in the keychain. Give one to an agent with 'deskhand agent edit SLUG --toolserver NAME'.\n", r.Imported)
	}
	return nil
}

// importTarget registers on the tool servers reached.
type importTarget struct{ keeper toolServerKeeper }

func (t importTarget) Registered(ctx context.Context) ([]string, error) {
	list, err := t.keeper.ToolServers(ctx)
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	return names, err
}

func (t importTarget) Add(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error {
	return t.keeper.AddToolServer(ctx, s, sec)
}

// printImport is the table of what import found and did, then what it
// read past: entries it skipped and files it could not read.
func printImport(w io.Writer, r connect.ImportReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tRESULT")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.Found.Name, terminalText(row.From()), terminalText(r.Result(row)))
	}
	tw.Flush()
	for _, n := range r.Notes() {
		fmt.Fprintln(w, terminalText(n))
	}
}
