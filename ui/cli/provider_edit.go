package cli

import (
	"cmp"
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
)

// providerFields are the flags of provider add and edit.
type providerFields struct {
	kind, url           string
	keyStdin, removeKey bool // edit only: removeKey
}

// providerSaveCommand is 'deskhand provider add' or 'deskhand provider
// edit' (verb).
func (inv *invocation) providerSaveCommand(verb string) *cobra.Command {
	f := &providerFields{}
	c := &cobra.Command{
		Use:   verb + " NAME --kind KIND [--url URL] [--key-stdin]",
		Short: "add a model server; --key-stdin: its API key from stdin to the keychain",
		Example: `  deskhand provider add lab --kind openai-compatible --url http://127.0.0.1:1234/v1
  pass show claude | deskhand provider add claude --kind anthropic --key-stdin`,
		Args: exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error { return inv.saveProvider(cmd, f, args[0]) },
	}
	c.Flags().StringVar(&f.kind, "kind", "", "the server's kind: "+providerFlagKinds())
	c.Flags().StringVar(&f.url, "url", "", "the server's address (\"\" for the kind's default)")
	c.Flags().BoolVar(&f.keyStdin, "key-stdin", false, "read the API key from the first line of stdin, e.g. from a password manager; it is kept in the keychain only")
	if verb == "edit" {
		c.Use = "edit NAME [--kind KIND] [--url URL] [--key-stdin | --remove-key]"
		c.Short = "change a model server's given fields; --remove-key removes its key"
		c.Example = ""
		c.Flags().BoolVar(&f.removeKey, "remove-key", false, "remove the API key from the keychain")
	}
	return c
}

// saveProvider adds the provider name, or changes it, with the fields
// and key given.
func (inv *invocation) saveProvider(cmd *cobra.Command, f *providerFields, name string) error {
	given, adding := cmd.Flags().Changed, cmd.Name() == "add"
	switch {
	case adding && !given("kind"):
		return usagef(cmd, "'provider add' needs --kind (%s)", providerFlagKinds())
	case f.keyStdin && f.removeKey:
		return usagef(cmd, "--key-stdin sets the key and --remove-key removes it: give one")
	}
	var key agent.KeyChange
	if f.keyStdin {
		// Read before reaching the app: a refused key starts nothing.
		k, err := readKey(inv.stdin)
		if err != nil {
			return err
		}
		key = agent.KeyChange{Set: true, Key: k}
	} else if f.removeKey {
		key = agent.KeyChange{Set: true}
	}
	ctx := cmd.Context()
	return inv.withProviders(ctx, func(keeper providerKeeper, providers func() ([]agent.ProviderStatus, error)) error {
		list, err := providers()
		if err != nil {
			return err
		}
		var p agent.Provider
		found := findProvider(list, name)
		switch {
		case adding && found != nil:
			return userf("a provider named %q exists; change it with 'deskhand provider edit %s'", name, name)
		case !adding && found == nil:
			return agent.Userf(agent.ErrNotFound, "no provider named %q; see 'deskhand provider list'", name)
		case !adding:
			p = found.Provider
		default:
			p = agent.Provider{Name: name}
		}
		if given("kind") && agent.ProviderKind(f.kind) != p.Kind {
			if !adding && !given("url") && p.BaseURL != "" {
				fmt.Fprintf(inv.stderr, "The kind changes, so the address %s goes back to the default of %s; give --url to keep one.\n", p.BaseURL, f.kind)
			}
			p.Kind = agent.ProviderKind(f.kind)
			p.BaseURL = ""
		}
		if given("url") {
			p.BaseURL = f.url
		}
		return inv.storeProvider(ctx, keeper, p, key)
	})
}

// storeProvider saves the provider and its key, and says so.
func (inv *invocation) storeProvider(ctx context.Context, keeper providerKeeper, p agent.Provider, key agent.KeyChange) error {
	saved, err := keeper.SaveProvider(ctx, p, key)
	if err != nil {
		return err
	}
	var keyNote string
	switch {
	case key.Set && key.Key != "":
		keyNote = "; its API key is in the keychain (or, where a warning says so, the fallback file)"
	case key.Set:
		keyNote = "; its API key is removed"
	}
	fmt.Fprintf(inv.stderr, "Saved provider %s (%s at %s)%s. Check it with 'deskhand provider check %s'.\n", saved.Name, saved.Kind, cmp.Or(saved.BaseURL, "the default address"), keyNote, saved.Name)
	return nil
}
