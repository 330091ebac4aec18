package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

const providerSynopsis = "deskhand provider list | provider add NAME --kind KIND [--url URL] [--key-stdin] | provider edit NAME [--kind KIND] [--url URL] [--key-stdin | --remove-key] | provider check NAME | provider remove NAME"

// providerFields are the flags of provider add and edit.
var providerFields = []string{"kind", "url", "key-stdin", "remove-key"}

// maxKeyLen bounds what --key-stdin reads: API keys are far shorter.
const maxKeyLen = 16 << 10

// refusedKey is the --key flag, there only to be refused: a key on the
// command line shows in the process list and the shell's history. It
// keeps nothing of its value, so no message can repeat it.
type refusedKey struct{ given *bool }

func (k refusedKey) String() string { return "" }

func (k refusedKey) Set(string) error {
	*k.given = true
	return nil
}

func providerFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.StringVar(&f.kind, "kind", "", "add, edit: the server's kind: "+providerFlagKinds())
	fs.StringVar(&f.url, "url", "", "add, edit: the server's address (\"\" for the kind's default)")
	fs.BoolVar(&f.keyStdin, "key-stdin", false, "add, edit: read the API key from the first line of stdin, e.g. from a password manager; it is kept in the keychain only")
	fs.BoolVar(&f.removeKey, "remove-key", false, "edit: remove the API key from the keychain")
	fs.Var(refusedKey{&f.keyOnArgv}, "key", "refused: a key on the command line shows in the process list and shell history; use --key-stdin")
}

func runProvider(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if f.keyOnArgv {
		// Before anything else: the key must not be used, or repeated.
		return usagef(usage, "the API key is never taken on the command line, where other programs and the shell's history see it: pipe it in with --key-stdin (e.g. 'pass show claude | deskhand provider add claude --kind anthropic --key-stdin'); and consider the key exposed")
	}
	if len(words) == 0 {
		return usagef(usage, "usage: %s", providerSynopsis)
	}
	sub, rest := words[0], words[1:]
	wantArgs := map[string]int{"list": 0, "add": 1, "edit": 1, "check": 1, "remove": 1}
	if n, known := wantArgs[sub]; !known || len(rest) != n {
		// The words are not repeated: a key typed in the wrong place
		// would be.
		return usagef(usage, "usage: %s", providerSynopsis)
	}
	if sub != "add" && sub != "edit" {
		for _, name := range providerFields {
			if inv.set[name] {
				return usagef(usage, "--%s is for 'provider add' and 'provider edit', not 'provider %s'", name, sub)
			}
		}
	}
	switch {
	case sub == "add" && inv.set["remove-key"]:
		return usagef(usage, "--remove-key is for 'provider edit': a new provider has no key")
	case sub == "add" && !inv.set["kind"]:
		return usagef(usage, "'provider add' needs --kind (%s)", providerFlagKinds())
	case f.keyStdin && f.removeKey:
		return usagef(usage, "--key-stdin sets the key and --remove-key removes it: give one")
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
	stdout, stderr := inv.stdout, inv.stderr
	switch sub {
	case "list":
		list, err := providers()
		if err != nil {
			return err
		}
		printProviders(stdout, list)
		return nil
	case "check":
		models, err := keeper.ProviderModels(ctx, rest[0])
		if err != nil {
			return err
		}
		if len(models) == 0 {
			fmt.Fprintf(stderr, "%s answers, but offers no model.\n", rest[0])
			return nil
		}
		fmt.Fprintf(stderr, "%s answers and offers %d model(s):\n", rest[0], len(models))
		for _, m := range models {
			fmt.Fprintln(stdout, m)
		}
		return nil
	case "remove":
		if err := keeper.DeleteProvider(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Removed provider %s and its API key.\n", rest[0])
		return nil
	}
	list, err := providers()
	if err != nil {
		return err
	}
	var p agent.Provider
	found := findProvider(list, rest[0])
	switch {
	case sub == "add" && found != nil:
		return userf("a provider named %q exists; change it with 'deskhand provider edit %s'", rest[0], rest[0])
	case sub == "edit" && found == nil:
		return agent.Userf(agent.ErrNotFound, "no provider named %q; see 'deskhand provider list'", rest[0])
	case sub == "edit":
		p = found.Provider
	default:
		p = agent.Provider{Name: rest[0]}
	}
	if inv.set["kind"] && agent.ProviderKind(f.kind) != p.Kind {
		if sub == "edit" && !inv.set["url"] && p.BaseURL != "" {
			fmt.Fprintf(stderr, "The kind changes, so the address %s goes back to the default of %s; give --url to keep one.\n", p.BaseURL, f.kind)
		}
		p.Kind = agent.ProviderKind(f.kind)
		p.BaseURL = ""
	}
	if inv.set["url"] {
		p.BaseURL = f.url
	}
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
	fmt.Fprintf(stderr, "Saved provider %s (%s at %s)%s. Check it with 'deskhand provider check %s'.\n", saved.Name, saved.Kind, cmp.Or(saved.BaseURL, "the default address"), keyNote, saved.Name)
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
