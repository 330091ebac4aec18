package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/ui/connect"
)

// StdioClient names a stdio client that gives no --client.
const StdioClient = "stdio"

func (inv *invocation) stdioCommand() *cobra.Command {
	var client string
	c := &cobra.Command{
		Use:   "stdio",
		Short: "for stdio-only clients: bridge to the running app, or serve in-process",
		Long: `For stdio-only clients: bridge to the running app with the client's token from the
keychain (the client --client names, default "stdio"), or serve the agents in-process when
the app is not running.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return inv.stdio(cmd.Context(), client) },
	}
	c.Flags().StringVar(&client, "client", "", "bridge to the running app as this client `NAME` (default \"stdio\")")
	return c
}

// stdio bridges to the running app (so conversations, questions and
// the database are the app's), or serves in-process when none runs.
func (inv *invocation) stdio(ctx context.Context, client string) error {
	ran, err := inv.bridgeStdio(ctx, cmp.Or(client, StdioClient))
	if ran {
		return err
	}
	fmt.Fprintln(inv.stderr, "Deskhand is not running: serving in-process; questions can only go to this client.")
	return inv.env.ServeStdio(ctx, inv.g, client, inv.stdin, inv.stdout, inv.stderr)
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
