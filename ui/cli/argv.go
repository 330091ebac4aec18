package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// argv readies a command line for cobra. The command's words go first,
// wherever they were among the flags, and the single-dash long flags of
// the command lines written before (Go's flag package read -client as
// --client, which pflag reads as -c -l -i …) become double-dash ones.
// Shell completion's requests go as they are.
func argv(root *cobra.Command, args []string) []string {
	out := []string{} // never nil: cobra would read os.Args instead
	if completing(args) {
		return append(out, args...)
	}
	kinds := flagKindsIn(root)
	c, words, rest := commandFirst(root, args, kinds)
	return append(append(out, words...), normalise(rest, kinds.of(c))...)
}

// completing tells a shell completion's request (the scripts of 'deskhand
// completion' run 'deskhand __complete WORDS…').
func completing(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// flagKinds maps each long flag's name to whether it takes a value.
type flagKinds map[string]bool

// flagKindsIn is every flag of the tree; a name that takes a value in one
// command and not in another (answer's --client) is taken to take one.
func flagKindsIn(root *cobra.Command) flagKinds {
	kinds := flagKinds{"help": false}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { kinds[f.Name] = kinds[f.Name] || f.NoOptDefVal == "" })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return kinds
}

// of is kinds with c's own flags and those it inherits as c takes them.
func (kinds flagKinds) of(c *cobra.Command) flagKinds {
	own := maps.Clone(kinds)
	for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) { own[f.Name] = f.NoOptDefVal == "" })
	}
	return own
}

// commandFirst finds the command: the first word that is neither a flag
// nor a flag's value names it, the next such word its subcommand, and so
// on down the tree; after "--", which ends the flags, the next word is
// still a command. So "deskhand --data DIR stdio --client NAME" and
// "deskhand stdio --client NAME --data DIR" are the same. rest is args
// without the command's words.
func commandFirst(root *cobra.Command, args []string, kinds flagKinds) (c *cobra.Command, words, rest []string) {
	c, rest = root, slices.Clone(args)
	for c.HasSubCommands() {
		i := firstWord(rest, kinds)
		if i < 0 {
			break
		}
		sub := subcommand(c, rest[i])
		if sub == nil {
			break
		}
		words = append(words, rest[i])
		rest = slices.Delete(rest, i, i+1)
		c = sub
	}
	return c, words, rest
}

// firstWord is the index of the first word that is neither a flag nor a
// flag's value, or of the word after "--"; -1 if there is none.
func firstWord(args []string, kinds flagKinds) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case !strings.HasPrefix(a, "-") || a == "-":
			return i
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && kinds[name] {
			i++
		}
	}
	return -1
}

func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// normalise rewrites each single-dash long flag that kinds knows (-client,
// -client=NAME) as its double-dash form, up to "--". A flag's value stays
// as it is (--prompt -data keeps -data), and so do the other words and
// single letters (-h).
func normalise(args []string, kinds flagKinds) []string {
	out := append([]string{}, args...) // never nil

	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, known := kinds[name]
		if !known {
			continue
		}
		if !strings.HasPrefix(a, "--") && len(name) > 1 {
			out[i] = "-" + a
		}
		if takesValue && !hasValue {
			i++ // its value
		}
	}
	return out
}
