package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
)

// providerKeeper is what 'deskhand provider' needs: the running app's
// control channel (so agents use a change at once, and the key goes to
// the app's keychain over its private socket), or the core over the store.
type providerKeeper interface {
	SaveProvider(ctx context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error)
	DeleteProvider(ctx context.Context, name string) error
	ProviderModels(ctx context.Context, name string) ([]string, error)
}

// maxKeyLen bounds what --key-stdin reads: API keys are far shorter.
const maxKeyLen = 16 << 10

// refusedKey is the --key flag, there only to be refused: a key on the
// command line shows in the process list and the shell's history. It
// keeps nothing of its value, so no message can repeat it.
type refusedKey struct{ given *bool }

func (k refusedKey) String() string { return "" }
func (k refusedKey) Type() string   { return "string" }
func (k refusedKey) repeatable()    {} // refused however often given

func (k refusedKey) Set(string) error {
	*k.given = true
	return nil
}

// refuseKey gives c the --key flag, to refuse a key given on the command
// line before anything else: the key must not be used, or repeated.
func refuseKey(c *cobra.Command) {
	var given bool
	c.Flags().Var(refusedKey{&given}, "key", "refused: a key on the command line shows in the process list and shell history; use --key-stdin")
	args := c.Args
	c.Args = func(c *cobra.Command, words []string) error {
		if given {
			return usagef(c, "the API key is never taken on the command line, where other programs and the shell's history see it: pipe it in with --key-stdin (e.g. 'pass show claude | deskhand provider add claude --kind anthropic --key-stdin'); and consider the key exposed")
		}
		return args(c, words)
	}
}

func (inv *invocation) providerCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "provider COMMAND",
		Short: "the model servers agents run on, with their API keys",
		Long: `List, add, change, check and remove the model servers agents run on; KIND is
` + providerFlagKinds() + `. An API key is read from stdin into the keychain (--key-stdin),
never taken on the command line.`,
	}
	c.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "list the model servers agents run on, with whether each has a key",
			Args:  exactly(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return inv.withProviders(cmd.Context(), func(_ providerKeeper, providers func() ([]agent.ProviderStatus, error)) error {
					list, err := providers()
					if err != nil {
						return err
					}
					printProviders(inv.stdout, list)
					return nil
				})
			},
		},
		inv.providerSaveCommand("add"),  // provider_edit.go
		inv.providerSaveCommand("edit"), // provider_edit.go
		&cobra.Command{
			Use:   "check NAME",
			Short: "list the models its server offers (exit status 1 if it cannot)",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withProviders(cmd.Context(), func(keeper providerKeeper, _ func() ([]agent.ProviderStatus, error)) error {
					return inv.checkProvider(cmd.Context(), keeper, args[0])
				})
			},
		},
		&cobra.Command{
			Use:   "remove NAME",
			Short: "delete a provider no agent uses, and its key",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withProviders(cmd.Context(), func(keeper providerKeeper, _ func() ([]agent.ProviderStatus, error)) error {
					if err := keeper.DeleteProvider(cmd.Context(), args[0]); err != nil {
						return err
					}
					fmt.Fprintf(inv.stderr, "Removed provider %s and its API key.\n", args[0])
					return nil
				})
			},
		},
	)
	for _, sub := range c.Commands() {
		refuseKey(sub)
	}
	return c
}

// withProviders runs do with the running app's providers when there is
// one, else with the data folder's.
func (inv *invocation) withProviders(ctx context.Context, do func(keeper providerKeeper, providers func() ([]agent.ProviderStatus, error)) error) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var (
		keeper    providerKeeper
		providers func() ([]agent.ProviderStatus, error)
	)
	if ctl != nil {
		keeper, providers = ctl, func() ([]agent.ProviderStatus, error) { return ctl.Providers(ctx) }
	} else {
		keeper, providers = localProviders{app.Core.Providers()}, func() ([]agent.ProviderStatus, error) { return app.Core.Providers().List(), nil }
	}
	return do(keeper, providers)
}

func (inv *invocation) checkProvider(ctx context.Context, keeper providerKeeper, name string) error {
	models, err := keeper.ProviderModels(ctx, name)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		fmt.Fprintf(inv.stderr, "%s answers, but offers no model.\n", name)
		return nil
	}
	fmt.Fprintf(inv.stderr, "%s answers and offers %d model(s):\n", name, len(models))
	for _, m := range models {
		fmt.Fprintln(inv.stdout, m)
	}
	return nil
}

// readKey reads an API key from the first line of r: without its line
// break, and not empty. Nothing read is ever put in an error.
func readKey(r io.Reader) (string, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, maxKeyLen+2), maxKeyLen+2).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", agent.Userf(err, "cannot read the API key from stdin")
	}
	if errors.Is(err, io.EOF) && len(line) > maxKeyLen {
		return "", userf("the API key on stdin is longer than %d bytes: give only the key, on one line", maxKeyLen)
	}
	key := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if key == "" {
		return "", userf("--key-stdin read no API key: give it on the first line of stdin, e.g. 'pass show claude | deskhand provider add claude --kind anthropic --key-stdin'")
	}
	return key, nil
}

func providerFlagKinds() string {
	kinds := make([]string, len(agent.ProviderKinds))
	for i, k := range agent.ProviderKinds {
		kinds[i] = string(k)
	}
	return strings.Join(kinds, ", ")
}

func findProvider(list []agent.ProviderStatus, name string) *agent.ProviderStatus {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

func printProviders(w io.Writer, list []agent.ProviderStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tADDRESS\tKEY\tAGENTS")
	for _, p := range list {
		key := "no"
		if p.HasKey {
			key = "yes"
		}
		agents := "-"
		if len(p.UsedBy) > 0 {
			agents = strings.Join(p.UsedBy, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, cmp.Or(p.BaseURL, "default"), key, agents)
	}
	tw.Flush()
}
