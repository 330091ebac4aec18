package cli

// REFERENCE.md, the command reference, is generated from the command tree.
//go:generate go test -run=TestReference -update

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// finish readies every command of the tree: its usage and help, how a
// command line it does not understand is refused, the noun commands
// (agent, token…) that only hold others, and its flags' values, which
// refuse to be given twice if once (not for shell completion, where cobra
// parses a command line more than once).
func finish(root *cobra.Command, once bool) {
	root.SetUsageFunc(func(c *cobra.Command) error {
		_, err := io.WriteString(c.OutOrStderr(), usage(c))
		return err
	})
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { _, _ = io.WriteString(c.OutOrStdout(), usage(c)) })
	root.SetFlagErrorFunc(flagError)
	root.InitDefaultHelpCmd() // now, so that argv finds 'help'
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		wrapFlags(c.Flags(), once)
		wrapFlags(c.PersistentFlags(), once)
		switch {
		case c.HasSubCommands() && c.RunE == nil:
			c.RunE = needsCommand
			if c.Args == nil {
				c.Args = cobra.ArbitraryArgs
			}
		case !c.HasSubCommands() && c.ValidArgsFunction == nil && len(c.ValidArgs) == 0:
			c.ValidArgsFunction = cobra.NoFileCompletions // no command takes files as words
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// needsCommand runs a noun given without one of its commands, or with a
// word that is none: the words are not repeated (a key typed in the
// wrong place would be).
func needsCommand(c *cobra.Command, _ []string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return usagef(c, "usage: %s %s", c.CommandPath(), strings.Join(names, "|"))
}

// noArgs refuses words after a command that takes none.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef(c, "%s takes no arguments, not %q", c.Name(), args)
	}
	return nil
}

// exactly is n words, each the command's; what was given instead is not
// repeated (a key typed in the wrong place would be).
func exactly(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef(c, "usage: %s", synopsis(c))
		}
		return nil
	}
}

// synopsis is how c is called, without its flags.
func synopsis(c *cobra.Command) string {
	return strings.TrimSuffix(c.UseLine(), " [flags]")
}

// commandName is c's path without the program's name: "agent add".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), c.Root().Name()), " ")
}

// usage is c's usage: how it is called, what it does, its commands, its
// examples and its flags. The root's is the overview of every command.
func usage(c *cobra.Command) string {
	if !c.HasParent() {
		return rootUsage(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n", c.UseLine())
	if about := strings.TrimSpace(cmp.Or(c.Long, c.Short)); about != "" {
		fmt.Fprintf(&b, "\n%s\n", about)
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\ncommands:\n")
		listCommands(&b, c.Commands(), false)
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "\nexamples:\n%s\n", c.Example)
	}
	if own := flagUsages(c.LocalFlags()); own != "" {
		fmt.Fprintf(&b, "\nflags:\n%s", own)
	}
	if global := flagUsages(c.InheritedFlags()); global != "" {
		fmt.Fprintf(&b, "\nglobal flags (before or after the command):\n%s", global)
	}
	return b.String()
}

// rootUsage is the overview: every command, and the global flags.
func rootUsage(root *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n  %s [flags] [command] [arguments]\n\n%s\n\nCommands:\n", root.Short, root.Name(), root.Long)
	listCommands(&b, root.Commands(), true)
	fmt.Fprintf(&b, "\nEach command refuses flags it does not take (exit status 2); '%s COMMAND --help'\nlists them.\n", root.Name())
	fmt.Fprintf(&b, "\nFlags (before or after the command):\n%s", flagUsages(root.LocalFlags()))
	return b.String()
}

// listCommands lists the commands, each with its words and what it does;
// deep lists a noun's commands in its place (agent list, agent add…).
func listCommands(b *strings.Builder, cmds []*cobra.Command, deep bool) {
	const width = 20
	for _, c := range cmds {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		if deep && c.HasAvailableSubCommands() {
			listCommands(b, c.Commands(), false)
			continue
		}
		words := c.Use
		if deep || c.Parent().HasParent() {
			words = strings.TrimPrefix(commandName(c.Parent())+" "+c.Use, " ")
		}
		if len(words) > width {
			fmt.Fprintf(b, "  %s\n  %-*s  %s\n", words, width, "", c.Short)
			continue
		}
		fmt.Fprintf(b, "  %-*s  %s\n", width, words, c.Short)
	}
}

// flagUsages lists the flags of fs but --help, which every command takes.
func flagUsages(fs *pflag.FlagSet) string {
	shown := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			shown.AddFlag(f)
		}
	})
	return shown.FlagUsagesWrapped(100)
}

// helpCommand is 'deskhand help [COMMAND]'.
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "print this, or a command's usage and flags",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usagef(cmd, "no command %q; see 'deskhand --help'", strings.Join(args, " "))
			}
			_, err = io.WriteString(cmd.OutOrStdout(), usage(c))
			return err
		},
	}
}

// flagError words pflag's complaint for the person, with the command's
// usage: a flag of another command says which takes it.
func flagError(c *cobra.Command, err error) error {
	var (
		misuse  *flagMisuse
		unknown *pflag.NotExistError
	)
	switch {
	case errors.As(err, &misuse):
		return usagef(c, "%s", misuse.msg)
	case errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() != "":
		return usagef(c, "'%s' takes no flag -%s", c.CommandPath(), unknown.GetSpecifiedShortnames())
	case errors.As(err, &unknown):
		name := unknown.GetSpecifiedName()
		if note := elsewhere(c, name); note != "" {
			return usagef(c, "%s", note)
		}
		return usagef(c, "'%s' takes no flag --%s", c.CommandPath(), name)
	}
	return usagef(c, "%s", err)
}

// flagNotes say more than elsewhere would, for a command or a noun.
var flagNotes = map[string]string{
	"provider add --remove-key": "--remove-key is for 'provider edit': a new provider has no key",
	"token --all":               "--all goes with 'token agents' only",
}

// elsewhere says which commands of c's noun take the flag c does not:
// "--name is for 'agent add' and 'agent edit', not 'agent list'"; "" when
// none does, or c belongs to no noun.
func elsewhere(c *cobra.Command, name string) string {
	noun := c.Parent()
	if noun == nil || !noun.HasParent() {
		return ""
	}
	for _, key := range []string{commandName(c), commandName(noun)} {
		if note, ok := flagNotes[key+" --"+name]; ok {
			return note
		}
	}
	var takers []string
	for _, sib := range noun.Commands() {
		if f := sib.LocalFlags().Lookup(name); sib != c && f != nil && !f.Hidden {
			takers = append(takers, "'"+commandName(sib)+"'")
		}
	}
	switch len(takers) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("--%s is for %s, not '%s'", name, takers[0], commandName(c))
	}
	return fmt.Sprintf("--%s is for %s and %s, not '%s'", name, strings.Join(takers[:len(takers)-1], ", "), takers[len(takers)-1], commandName(c))
}

// flagMisuse is a flag's value refused with a message of its own, which
// never repeats the value.
type flagMisuse struct{ msg string }

func (e *flagMisuse) Error() string { return e.msg }

// flagValue is a flag's value as the command line has it: the
// placeholder its usage names (`DIR`), which the help shows in place of
// the value's type and shell completion without the quotes; and, once
// armed, a second value refused: which one wins would be a guess.
type flagValue struct {
	pflag.Value
	name, placeholder string
	once, seen        bool
}

func (v *flagValue) Type() string { return cmp.Or(v.placeholder, v.Value.Type()) }

func (v *flagValue) Set(s string) error {
	if v.once && v.seen {
		return &flagMisuse{fmt.Sprintf("--%s is given more than once", v.name)}
	}
	v.seen = true
	return v.Value.Set(s)
}

// repeatable marks a flag that may be given more than once.
type repeatable interface{ repeatable() }

// wrapFlags wraps the values of fs's flags in flagValues.
func wrapFlags(fs *pflag.FlagSet, once bool) {
	fs.VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*flagValue); done {
			return
		}
		v := &flagValue{Value: f.Value, name: f.Name}
		if name, usage := pflag.UnquoteUsage(f); usage != f.Usage {
			v.placeholder, f.Usage = name, usage
		}
		// --header, --env… may be repeated; --key is refused however
		// often it is given.
		_, many := f.Value.(repeatable)
		v.once = once && !many
		f.Value = v
	})
}
