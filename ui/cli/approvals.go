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
)

// approvalsCommand lists, revokes or re-enables approval rules: through
// the running app's control channel, so the next call sees the change,
// or on the store when the app is not running.
func (inv *invocation) approvalsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "approvals COMMAND",
		Short: `list, revoke and re-enable the approval rules ("always allow")`,
	}
	c.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: `list the approval rules ("always allow") with their IDs`,
			Args:  exactly(0),
			RunE:  func(cmd *cobra.Command, _ []string) error { return inv.listRules(cmd.Context()) },
		},
		&cobra.Command{
			Use:   "revoke ID",
			Short: "revoke a rule: the agent's next such call asks again",
			Args:  exactly(1),
			RunE:  func(cmd *cobra.Command, args []string) error { return inv.revokeRule(cmd.Context(), args[0]) },
		},
		&cobra.Command{
			Use:   "enable ID",
			Short: "turn on a rule that waits for review, for every client it names",
			Args:  exactly(1),
			RunE:  func(cmd *cobra.Command, args []string) error { return inv.enableRule(cmd.Context(), args[0]) },
		},
	)
	return c
}

func (inv *invocation) revokeRule(ctx context.Context, id string) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	if ctl != nil {
		err = ctl.RevokeApprovalRule(ctx, id)
	} else {
		err = app.Core.Approvals().Revoke(ctx, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.stderr, "Revoked %s: the next such call asks again.\n", id)
	return nil
}

func (inv *invocation) enableRule(ctx context.Context, id string) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	if ctl != nil {
		err = ctl.EnableApprovalRule(ctx, id)
	} else {
		err = app.Core.Approvals().Enable(ctx, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.stderr, "Enabled %s: the calls it covers run without asking.\n", id)
	return nil
}

func (inv *invocation) listRules(ctx context.Context) error {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var infos []control.RuleInfo
	if ctl != nil {
		infos, err = ctl.ApprovalRules(ctx)
	} else {
		var rules []agent.ApprovalRule
		if rules, err = app.Core.Approvals().Rules(ctx); err == nil {
			infos = control.RuleInfos(rules, app.Core.Agents().List(), app.Core.Clients().List())
		}
	}
	if err != nil {
		return err
	}
	printRules(inv.stdout, infos)
	return nil
}

func printRules(w io.Writer, infos []control.RuleInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tTOOL\tCLIENT\tFOLDER\tHOST\tCREATED\tSTATE")
	for _, r := range infos {
		state := "on"
		if r.Review != "" {
			state = "off, " + r.Review + " (approvals enable ID, or revoke ID)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.AgentSlug, r.Tool,
			orAny(r.ClientName), orAny(r.Folder), orAny(r.Host), r.CreatedAt.Local().Format(time.DateTime), state)
	}
	tw.Flush()
}

func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}
