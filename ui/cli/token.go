package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/connect"
)

// tokenCommand manages client tokens: through the running app when there
// is one (so changes apply at once), else on the store directly.
func (inv *invocation) tokenCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "token COMMAND",
		Short: "manage the clients' tokens and which agents each client sees",
		Long: `Manage the clients' tokens and which agents each client sees: through the running app
when there is one, so that changes apply at once, else on the data folder directly.`,
	}
	c.AddCommand(
		&cobra.Command{
			Use:   "create NAME",
			Short: "create a bearer token for the client NAME; prints the token alone",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withTokens(cmd.Context(), func(keeper tokenKeeper) error { return inv.issueToken(cmd.Context(), keeper.Create, args[0]) })
			},
		},
		&cobra.Command{
			Use:   "list",
			Short: "list the clients, when their tokens were made and last used, their agents",
			Args:  exactly(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return inv.withTokens(cmd.Context(), func(keeper tokenKeeper) error {
					infos, err := keeper.List(cmd.Context())
					if err != nil {
						return err
					}
					printTokens(inv.stdout, infos)
					return nil
				})
			},
		},
		&cobra.Command{
			Use:   "rotate NAME",
			Short: "give the client a new token (its conversations stay its own)",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withTokens(cmd.Context(), func(keeper tokenKeeper) error { return inv.issueToken(cmd.Context(), keeper.Rotate, args[0]) })
			},
		},
		&cobra.Command{
			Use:   "revoke NAME",
			Short: "revoke the client's token at once",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withTokens(cmd.Context(), func(keeper tokenKeeper) error {
					if err := keeper.Revoke(cmd.Context(), args[0]); err != nil {
						return err
					}
					fmt.Fprintf(inv.stderr, "Revoked the token of %q.\n", args[0])
					return nil
				})
			},
		},
		inv.tokenAgentsCommand(), // token_agents.go
	)
	return c
}

// issueToken prints the token issue gives the client: a new one, or its
// rotated one.
func (inv *invocation) issueToken(ctx context.Context, issue func(context.Context, string) (string, error), name string) error {
	token, err := issue(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintln(inv.stdout, token)
	return nil
}

// withTokens runs do with the running app's tokens when there is one,
// else with the data folder's.
func (inv *invocation) withTokens(ctx context.Context, do func(tokenKeeper) error) error {
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
	return do(keeper)
}

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
