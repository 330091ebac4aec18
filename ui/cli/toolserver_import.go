package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/connect"
)

// importVerdict is what 'toolserver import' does with a server it found.
type importVerdict struct {
	found  connect.FoundServer
	server agent.ToolServer
	sec    agent.ToolServerSecrets
	skip   string // why it is not imported; "" to import it
}

// importPlan decides, for each server found in the clients' files, what
// to register: its plain values as they are, its secrets for the
// keychain. A server already registered under that name, one whose
// secrets sit in its arguments or URL (the keychain cannot hold those),
// and one whose values the client fills in (references to variables or
// inputs) are left, each with what to do instead.
func importPlan(found []connect.FoundServer, registered []string) []importVerdict {
	var out []importVerdict
	for _, fs := range found {
		v := importVerdict{found: fs}
		s := agent.ToolServer{Name: fs.Name, Command: fs.Command, Args: fs.Args, Dir: fs.Dir, Env: fs.Env, URL: fs.URL, Headers: fs.Headers}
		for _, sec := range fs.Secrets {
			if sec.Kind == connect.Header {
				s.SecretHeaders = append(s.SecretHeaders, sec.Key)
				v.sec.Headers = setOnce(v.sec.Headers, sec.Key, sec.Value())
			} else {
				s.SecretEnv = append(s.SecretEnv, sec.Key)
				v.sec.Env = setOnce(v.sec.Env, sec.Key, sec.Value())
			}
		}
		v.server = s
		switch {
		case slices.Contains(registered, fs.Name):
			v.skip = "a tool server of that name is registered already"
		case len(fs.SecretArgs) > 0 || fs.SecretURL:
			v.skip = "a secret sits in its arguments or URL, which the keychain cannot hold: move it to an environment variable or a header, then add it with 'deskhand toolserver add'"
		case len(fs.Refs) > 0:
			var needs []string
			for _, r := range fs.Refs {
				needs = append(needs, r.Needs...)
			}
			v.skip = "the client fills in " + strings.Join(needs, ", ") + ": add it with 'deskhand toolserver add' and --secret-env or --secret-header for those"
		}
		out = append(out, v)
	}
	return out
}

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
	imported, err := importInto(ctx, keeper, env, opts, dryRun, inv.stdout)
	switch {
	case err != nil:
		return err
	case dryRun:
		fmt.Fprintln(inv.stderr, "Dry run: nothing was registered.")
	case imported > 0:
		fmt.Fprintf(inv.stderr, "Registered %d tool server(s); their secrets are in the keychain. Give one to an agent with 'deskhand agent edit SLUG --toolserver NAME'.\n", imported)
	}
	return nil
}

// ImportToolServers is 'toolserver import' for the desktop: the servers
// of every client, Deskhand's own entries (at url, or running exe) left
// out, registered on core unless dryRun; w gets the table of what was
// found and done.
func ImportToolServers(ctx context.Context, core *agent.Core, url, exe string, dryRun bool, w io.Writer) (imported int, err error) {
	env, err := connect.DefaultEnv()
	if err != nil {
		return 0, agent.Userf(err, "cannot find your home folder")
	}
	return importInto(ctx, coreToolServers{core}, env, connect.ImportOptions{URLs: []string{url}, Commands: []string{exe}}, dryRun, w)
}

// importInto finds the servers and registers those importPlan keeps.
func importInto(ctx context.Context, keeper toolServerKeeper, env connect.Env, opts connect.ImportOptions, dryRun bool, w io.Writer) (int, error) {
	found := connect.FindServers(env, opts)
	list, err := keeper.ToolServers(ctx)
	if err != nil {
		return 0, err
	}
	var registered []string
	for _, s := range list {
		registered = append(registered, s.Name)
	}
	plan := importPlan(found.Servers, registered)
	imported := 0
	for i, v := range plan {
		if v.skip != "" || dryRun {
			continue
		}
		if err := keeper.AddToolServer(ctx, v.server, v.sec); err != nil {
			plan[i].skip = "not added: " + agent.UserMessage(err)
			continue
		}
		imported++
	}
	printImport(w, plan, found, dryRun)
	return imported, nil
}

// printImport is the table of what import found and did, then what it
// read past: entries it skipped and files it could not read.
func printImport(w io.Writer, plan []importVerdict, found connect.Found, dryRun bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tRESULT")
	for _, v := range plan {
		var from []string
		for _, src := range v.found.Sources {
			from = append(from, src.Client.Name)
		}
		result := "imported"
		switch {
		case v.skip != "":
			result = "left: " + v.skip
		case dryRun:
			result = "would be imported"
		}
		if n := len(v.found.Secrets); n > 0 && v.skip == "" {
			result += fmt.Sprintf(" (%d secret(s) to the keychain)", n)
		}
		if v.found.Disabled() {
			result += "; turned off in every client it came from"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.found.Name, terminalText(strings.Join(slices.Compact(from), ", ")), terminalText(result))
	}
	tw.Flush()
	for _, v := range plan {
		for _, n := range v.found.Notes {
			fmt.Fprintf(w, "%s: %s\n", v.found.Name, terminalText(n))
		}
	}
	for _, s := range found.Skipped {
		fmt.Fprintf(w, "skipped %s in %s (%s): %s\n", terminalText(s.Source.Name), s.Source.Client.Name, s.Source.Path, terminalText(s.Reason))
	}
	for _, e := range found.Errors {
		fmt.Fprintf(w, "could not read %s (%s): %s\n", e.Path, e.Client.Name, terminalText(agent.UserMessage(e.Err)))
	}
}
