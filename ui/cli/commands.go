package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/connect"
)

func runDesktop(ctx context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	if len(words) > 0 {
		return usagef(usage, "unknown command %q; see 'deskhand --help'", words[0])
	}
	return inv.env.Desktop(ctx, inv.g, inv.stderr)
}

func runServe(ctx context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	if len(words) > 0 {
		return usagef(usage, "serve takes no arguments, not %q", words)
	}
	return inv.env.Serve(ctx, inv.g, inv.stderr)
}

func runVersion(_ context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	if len(words) > 0 {
		return usagef(usage, "version takes no arguments, not %q", words)
	}
	fmt.Fprintf(inv.stdout, "deskhand %s (%s %s/%s)\n", inv.env.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

func runHelp(_ context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	if len(words) == 0 {
		fmt.Fprint(inv.stdout, inv.mainUsage())
		return nil
	}
	c, ok := lookup(words[0])
	if !ok || len(words) > 1 {
		return usagef(usage, "no command %q; see 'deskhand --help'", strings.Join(words, " "))
	}
	fmt.Fprint(inv.stdout, inv.usageOf(c))
	return nil
}

// ---- stdio ----

func stdioFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.StringVar(&f.client, "client", "", `bridge to the running app as this client (default "stdio")`)
}

// StdioClient names a stdio client that gives no --client.
const StdioClient = "stdio"

// runStdio bridges to the running app (so conversations, questions and
// the database are the app's), or serves in-process when none runs.
func runStdio(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if len(words) > 0 {
		return usagef(usage, "stdio takes no arguments, not %q", words)
	}
	ran, err := inv.bridgeStdio(ctx, cmp.Or(f.client, StdioClient))
	if ran {
		return err
	}
	fmt.Fprintln(inv.stderr, "Deskhand is not running: serving in-process; questions can only go to this client.")
	return inv.env.ServeStdio(ctx, inv.g, f.client, inv.stdin, inv.stdout, inv.stderr)
}

// bridgeStdio relays stdio to the running app as the named client; ran is
// false when no app is running.
func (inv *invocation) bridgeStdio(ctx context.Context, client string) (ran bool, err error) {
	ctl, err := control.Dial(control.SocketPath(inv.g.Data))
	if err != nil {
		return false, nil
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return true, err
	}
	secrets := inv.env.Secrets(inv.g.Data, func(msg string) { fmt.Fprintln(inv.stderr, msg) })
	token, err := StdioToken(ctx, secrets, controlTokens{ctl}, client, inv.stderr)
	if err != nil {
		return true, err
	}
	return true, inv.env.Bridge(ctx, st.URL, token, inv.stdin, inv.stdout, inv.stderr)
}

// stdioTokens is what StdioToken needs of the running app's tokens.
type stdioTokens interface {
	Create(ctx context.Context, name string) (string, error)
	List(ctx context.Context) ([]control.TokenInfo, error)
}

// StdioToken is the keychain's token for a stdio client, created the
// first time (kept in the keychain, never in argv or a config file). A
// client of that name whose token this keychain does not hold is refused,
// not given a new token: its token may be in another client's config,
// which a new one would cut off. Notes for the person go to w.
func StdioToken(ctx context.Context, secrets agent.Secrets, tokens stdioTokens, client string, w io.Writer) (string, error) {
	token, err := secrets.Get(connect.SecretKey(client))
	if err == nil {
		return token, nil
	}
	if !errors.Is(err, agent.ErrNotFound) {
		// No keychain to read: a new token goes to the reported fallback.
		fmt.Fprintln(w, agent.UserMessage(err))
	}
	existing, err := tokens.List(ctx)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(existing, func(t control.TokenInfo) bool { return t.Name == client }) {
		return "", agent.Userf(nil, "Deskhand already has a client named %q, and this keychain holds no token for it: its token may be in "+
			"another entry's config, which a new token would cut off, so none was made. Connect that client again from "+
			"Deskhand (Connect, or deskhand connect), or give this stdio entry a name of its own (--client %s-stdio)", client, client)
	}
	if token, err = tokens.Create(ctx, client); err != nil {
		return "", err
	}
	if err := secrets.Set(connect.SecretKey(client), token); err != nil {
		return "", err
	}
	fmt.Fprintf(w, "Created a token for %q; it is kept in the keychain (or the fallback file reported above), never in a config file or argv.\n", client)
	return token, nil
}

// ---- token ----

// tokenKeeper manages client tokens: through the running app when there
// is one (controlTokens), else on the store (CoreTokens).
type tokenKeeper interface {
	Create(ctx context.Context, name string) (string, error)
	Rotate(ctx context.Context, name string) (string, error)
	List(ctx context.Context) ([]control.TokenInfo, error)
	Revoke(ctx context.Context, name string) error
}

// controlTokens manages tokens through the running app, so they apply at once.
type controlTokens struct{ ctl *control.Client }

func (t controlTokens) Create(ctx context.Context, name string) (string, error) {
	return t.ctl.CreateToken(ctx, name)
}

func (t controlTokens) Rotate(ctx context.Context, name string) (string, error) {
	return t.ctl.RotateToken(ctx, name)
}

func (t controlTokens) List(ctx context.Context) ([]control.TokenInfo, error) {
	return t.ctl.Tokens(ctx)
}

func (t controlTokens) Revoke(ctx context.Context, name string) error {
	return t.ctl.RevokeToken(ctx, name)
}

// coreTokens manages tokens on a core in this process: the store opened
// directly when the app is not running.
type coreTokens struct {
	connect.ClientTokens
	core *agent.Core
}

func newCoreTokens(core *agent.Core) coreTokens {
	return coreTokens{ClientTokens: connect.ClientTokens{Clients: core.Clients()}, core: core}
}

func (t coreTokens) Create(ctx context.Context, name string) (string, error) {
	_, token, err := t.core.Clients().Create(ctx, name)
	return token, err
}

func (t coreTokens) List(context.Context) ([]control.TokenInfo, error) {
	return control.Tokens(control.CoreOf(t.core)), nil
}

const tokenSynopsis = "deskhand token create NAME | token list | token rotate NAME | token revoke NAME | " + tokenAgentsSynopsis

// runToken manages client tokens: through the running app when there is
// one (so changes apply at once), else on the store directly.
func runToken(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if len(words) == 0 {
		return usagef(usage, "usage: %s", tokenSynopsis)
	}
	sub, rest := words[0], words[1:]
	if sub == "agents" {
		return runTokenAgents(ctx, inv, f, rest, usage)
	}
	if f.all {
		return usagef(usage, "--all goes with 'token agents' only")
	}
	wantArgs := map[string]int{"create": 1, "list": 0, "revoke": 1, "rotate": 1}
	if n, known := wantArgs[sub]; !known || len(rest) != n {
		return usagef(usage, "usage: %s", tokenSynopsis)
	}
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var keeper tokenKeeper
	if ctl != nil {
		keeper = controlTokens{ctl}
	} else {
		keeper = newCoreTokens(app.Core)
	}
	switch sub {
	case "create", "rotate":
		issue := keeper.Create
		if sub == "rotate" {
			issue = keeper.Rotate
		}
		token, err := issue(ctx, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(inv.stdout, token)
	case "list":
		infos, err := keeper.List(ctx)
		if err != nil {
			return err
		}
		printTokens(inv.stdout, infos)
	case "revoke":
		if err := keeper.Revoke(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(inv.stderr, "Revoked the token of %q.\n", rest[0])
	}
	return nil
}

// reach finds the running app's control channel, so that a command's
// changes apply at once, or else opens the data folder itself; done
// closes what was opened.
func (inv *invocation) reach(ctx context.Context) (ctl *control.Client, app *Opened, done func(), err error) {
	if ctl, err := control.Dial(control.SocketPath(inv.g.Data)); err == nil {
		return ctl, nil, func() {}, nil
	}
	app, err = inv.env.Open(ctx, &inv.g, inv.stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	return nil, app, app.Close, nil
}

func printTokens(w io.Writer, infos []control.TokenInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCREATED\tLAST USED\tAGENTS")
	for _, t := range infos {
		last := "never"
		if !t.LastUsedAt.IsZero() {
			last = t.LastUsedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.CreatedAt.Local().Format(time.DateTime), last, agentsColumn(t))
	}
	tw.Flush()
}

// ---- questions and answer ----

// errNotServing: questions live in the running app only.
var errNotServing = &agent.UserError{Msg: "Deskhand is not running with this data folder, so no question is waiting; start it with 'deskhand serve'"}

func runQuestions(ctx context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	if len(words) > 0 {
		return usagef(usage, "questions takes no arguments, not %q", words)
	}
	ctl, err := control.Dial(control.SocketPath(inv.g.Data))
	if err != nil {
		return errNotServing
	}
	qs, err := ctl.Questions(ctx)
	if err != nil {
		return err
	}
	w := inv.stdout
	if len(qs) == 0 {
		fmt.Fprintln(w, "No question is waiting.")
		return nil
	}
	for _, q := range qs {
		fmt.Fprintf(w, "%s  %s from %s, expires %s\n  %s\n", q.ID, q.Kind, q.Agent, q.ExpiresAt.Local().Format(time.TimeOnly), terminalText(q.Prompt))
		if len(q.Choices) > 0 {
			fmt.Fprintf(w, "  choices: %s\n", terminalText(strings.Join(q.Choices, " | ")))
		}
		if q.Kind == string(agent.KindApproval) {
			fmt.Fprintf(w, "  answer with: deskhand answer %s approve|deny [--comment TEXT]\n", q.ID)
		} else {
			fmt.Fprintf(w, "  answer with: deskhand answer %s TEXT  (or --decline)\n", q.ID)
		}
	}
	return nil
}

func answerFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.BoolVar(&f.decline, "decline", false, "decline the question instead of answering it")
	fs.StringVar(&f.comment, "comment", "", "a comment for the agent with an approval or denial")
	fs.BoolVar(&f.always, "always", false, "approve: always allow this tool for this agent from now on (an approval rule)")
	fs.BoolVar(&f.ruleClient, "client", false, "with --always: only when the client that called now calls")
	fs.StringVar(&f.ruleFolder, "folder", "", "with --always: only for paths inside this folder")
	fs.StringVar(&f.ruleHost, "host", "", "with --always: only for URLs on this host")
}

func runAnswer(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if len(words) == 0 || (len(words) == 1 && !f.decline) {
		return usagef(usage, "usage: deskhand answer ID TEXT | deskhand answer ID approve|deny [--comment TEXT] | deskhand answer ID --decline")
	}
	if err := checkRemember(f); err != nil {
		return usagef(usage, "%s", agent.UserMessage(err))
	}
	ctl, err := control.Dial(control.SocketPath(inv.g.Data))
	if err != nil {
		return errNotServing
	}
	id := words[0]
	if f.decline {
		if err := ctl.Answer(ctx, id, nil, true); err != nil {
			return err
		}
		fmt.Fprintln(inv.stderr, "Declined.")
		return nil
	}
	qs, err := ctl.Questions(ctx)
	if err != nil {
		return err
	}
	var content map[string]any
	for _, q := range qs {
		if q.ID == id {
			if content, err = AnswerContent(q.Kind, strings.Join(words[1:], " "), f.comment); err != nil {
				return err
			}
		}
	}
	if content == nil {
		return agent.ErrQuestionClosed
	}
	if err := rememberContent(content, f); err != nil {
		return usagef(usage, "%s", agent.UserMessage(err))
	}
	if err := ctl.Answer(ctx, id, content, false); err != nil {
		return err
	}
	fmt.Fprintln(inv.stderr, "Answered.")
	return nil
}

// AnswerContent is what a typed answer sends for a question of the kind:
// for an approval, approve or deny (with the comment); else the text.
func AnswerContent(kind, text, comment string) (map[string]any, error) {
	if kind != string(agent.KindApproval) {
		return map[string]any{"answer": text}, nil
	}
	var content map[string]any
	switch strings.ToLower(text) {
	case "approve", "yes", "allow":
		content = map[string]any{"approve": true}
	case "deny", "no":
		content = map[string]any{"approve": false}
	default:
		return nil, userf("an approval is answered with approve or deny, not %q", text)
	}
	if comment != "" {
		content["comment"] = comment
	}
	return content, nil
}
