package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/deskhand/deskhand/server/agent"
)

// toolServerAddFlags are the flags of 'deskhand toolserver add'.
type toolServerAddFlags struct {
	command, url, dir string
	env, headers      map[string]string
	secrets           []secretRef
	allowSampling     bool
	secretOnArgv      bool // a secret's value was given: refused
}

func (inv *invocation) toolServerAddCommand() *cobra.Command {
	f := &toolServerAddFlags{}
	c := &cobra.Command{
		Use:   "add NAME (--command CMD [-- ARGS...] | --url URL)",
		Short: "register an MCP server: a command Deskhand runs, or an HTTP URL",
		Long: `Register the MCP server NAME: a command Deskhand runs (stdio), its arguments after '--', or
a Streamable HTTP URL. Secret values (--secret-env, --secret-header) are read from stdin, one
line per secret in the order given, or asked for without echo, and kept in the keychain:
never on the command line.`,
		Example: `  deskhand toolserver add fs --command npx -- -y @modelcontextprotocol/server-filesystem ~/notes
  deskhand toolserver add gh --url https://api.githubcopilot.com/mcp/ --secret-header Authorization`,
		Args: func(c *cobra.Command, args []string) error {
			if f.secretOnArgv {
				// Before anything else: the value must not be used, or repeated.
				return usagef(c, "a secret's value is never taken on the command line, where other programs and the shell's history see it: give --secret-env or --secret-header only its NAME; its value is read from stdin, one line per secret, or asked for without echo; and consider the value exposed")
			}
			given := c.Flags().Changed
			switch {
			case len(args) == 0:
				return usagef(c, "usage: %s", synopsis(c))
			case given("command") == given("url"):
				return usagef(c, "'toolserver add' needs either --command (a server Deskhand runs) or --url (a Streamable HTTP server)")
			case given("url") && len(args) > 1:
				return usagef(c, "arguments are for --command, not --url")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return inv.addToolServer(cmd.Context(), f, args[0], args[1:])
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.command, "command", "", "the command that runs the server (stdio); its arguments follow '--'")
	fs.StringVar(&f.url, "url", "", "the server's Streamable HTTP endpoint")
	fs.StringVar(&f.dir, "dir", "", "the folder the command runs in")
	fs.Var(pairsFlag{"env", &f.env}, "env", "an environment variable NAME=VALUE for the command (repeatable; not secret)")
	fs.Var(pairsFlag{"header", &f.headers}, "header", "a header NAME=VALUE sent to the URL (repeatable; not secret)")
	fs.Var(secretFlag{false, &f.secrets, &f.secretOnArgv}, "secret-env", "the NAME of a secret environment variable (repeatable); its value is read from stdin, one line per secret in the order given, or asked for without echo, and kept in the keychain")
	fs.Var(secretFlag{true, &f.secrets, &f.secretOnArgv}, "secret-header", "the NAME of a secret header, e.g. Authorization (repeatable); read as --secret-env")
	fs.BoolVar(&f.allowSampling, "allow-sampling", false, "let the server ask for the agent's model (off: refused)")
	_ = c.MarkFlagDirname("dir")
	return c
}

func (inv *invocation) addToolServer(ctx context.Context, f *toolServerAddFlags, name string, args []string) error {
	s := agent.ToolServer{Name: name, Command: f.command, Args: args, Dir: f.dir, URL: f.url,
		Env: f.env, Headers: f.headers, AllowSampling: f.allowSampling}
	for _, ref := range f.secrets {
		if ref.header {
			s.SecretHeaders = append(s.SecretHeaders, ref.name)
		} else {
			s.SecretEnv = append(s.SecretEnv, ref.name)
		}
	}
	// Read before reaching the app: a refused secret starts nothing.
	sec, err := readSecrets(inv.stdin, inv.stderr, s.Name, f.secrets)
	if err != nil {
		return err
	}
	return inv.withToolServers(ctx, func(keeper toolServerKeeper) error {
		if err := keeper.AddToolServer(ctx, s, sec); err != nil {
			return err
		}
		note := ""
		if n := len(f.secrets); n > 0 {
			note = fmt.Sprintf(" Its %d secret(s) are in the keychain (or, where a warning says so, the fallback file).", n)
		}
		fmt.Fprintf(inv.stderr, "Added tool server %s.%s Check it with 'deskhand toolserver check %s', then give it to an agent with 'deskhand agent edit SLUG --toolserver %s'.\n", s.Name, note, s.Name, s.Name)
		return nil
	})
}

// pairsFlag collects K=V flags.
type pairsFlag struct {
	name string
	m    *map[string]string
}

func (p pairsFlag) repeatable()    {}
func (p pairsFlag) String() string { return "" }
func (p pairsFlag) Type() string   { return "NAME=VALUE" }

func (p pairsFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return &flagMisuse{fmt.Sprintf("--%s takes NAME=VALUE", p.name)}
	}
	if *p.m == nil {
		*p.m = map[string]string{}
	}
	if _, dup := (*p.m)[k]; dup {
		return &flagMisuse{fmt.Sprintf("--%s %s is given more than once", p.name, k)}
	}
	(*p.m)[k] = v
	return nil
}

// secretRef names one secret, in the order the flags gave it: its value
// is read in that order.
type secretRef struct {
	header bool // a header; else an environment variable
	name   string
}

type secretFlag struct {
	header bool
	list   *[]secretRef
	onArgv *bool // a value was given: refused before anything runs
}

func (s secretFlag) repeatable()    {}
func (s secretFlag) String() string { return "" }
func (s secretFlag) Type() string   { return "NAME" }

func (s secretFlag) Set(v string) error {
	if strings.Contains(v, "=") {
		// A value on the command line shows in the process list and the
		// shell's history: refused by toolserver add, and never repeated
		// (an error here would be printed with the value).
		*s.onArgv = true
		return nil
	}
	*s.list = append(*s.list, secretRef{header: s.header, name: v})
	return nil
}

// maxSecretLen bounds one secret read from stdin.
const maxSecretLen = 16 << 10

// readSecrets reads the secrets' values: from a terminal, asked one by
// one without echo; otherwise one line each from stdin, in order. Nothing
// read is ever put in an error.
func readSecrets(stdin io.Reader, stderr io.Writer, server string, refs []secretRef) (agent.ToolServerSecrets, error) {
	var sec agent.ToolServerSecrets
	if len(refs) == 0 {
		return sec, nil
	}
	what := func(r secretRef) string {
		if r.header {
			return "header " + r.name
		}
		return "environment variable " + r.name
	}
	file, isFile := stdin.(*os.File)
	tty := isFile && term.IsTerminal(int(file.Fd()))
	lines := bufio.NewReaderSize(stdin, maxSecretLen+2)
	for _, r := range refs {
		var value string
		if tty {
			fmt.Fprintf(stderr, "Value of the secret %s of %s (not shown): ", what(r), server)
			b, err := term.ReadPassword(int(file.Fd()))
			fmt.Fprintln(stderr)
			if err != nil {
				return sec, agent.Userf(err, "cannot read the secret %s", what(r))
			}
			value = string(b)
		} else {
			line, err := lines.ReadString('\n')
			switch {
			case err != nil && !errors.Is(err, io.EOF):
				return sec, agent.Userf(err, "cannot read the secret %s from stdin", what(r))
			case len(line) > maxSecretLen+1:
				return sec, userf("the secret %s on stdin is longer than %d bytes", what(r), maxSecretLen)
			}
			value = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		}
		if value == "" {
			return sec, userf("no value for the secret %s: give one line per secret on stdin, in the order of the --secret-env and --secret-header flags", what(r))
		}
		if r.header {
			sec.Headers = setOnce(sec.Headers, r.name, value)
		} else {
			sec.Env = setOnce(sec.Env, r.name, value)
		}
	}
	return sec, nil
}

func setOnce(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// where is where a server runs, without secrets: the command and its
