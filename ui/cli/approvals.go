package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

const approvalsSynopsis = "deskhand approvals list | approvals revoke ID | approvals enable ID"

// runApprovals lists, revokes or re-enables approval rules: through the running
// app's control channel, so the next call sees the change, or on the
// store when the app is not running.
func runApprovals(ctx context.Context, inv *invocation, _ *cmdFlags, words []string, usage string) error {
	switch {
	case len(words) == 1 && words[0] == "list", len(words) == 2 && (words[0] == "revoke" || words[0] == "enable"):
	default:
		return usagef(usage, "usage: %s", approvalsSynopsis)
	}
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	switch words[0] {
	case "revoke":
		if ctl != nil {
			err = ctl.RevokeApprovalRule(ctx, words[1])
		} else {
			err = app.Core.Approvals().Revoke(ctx, words[1])
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(inv.stderr, "Revoked %s: the next such call asks again.\n", words[1])
		return nil
	case "enable":
		if ctl != nil {
			err = ctl.EnableApprovalRule(ctx, words[1])
		} else {
			err = app.Core.Approvals().Enable(ctx, words[1])
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(inv.stderr, "Enabled %s: the calls it covers run without asking.\n", words[1])
		return nil
	}
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

// checkRemember refuses narrowing flags without --always.
func checkRemember(f *cmdFlags) error {
	if !f.always && (f.ruleClient || f.ruleFolder != "" || f.ruleHost != "") {
		return userf("--client, --folder and --host narrow --always; add --always")
	}
	return nil
}

// rememberContent adds an "always allow" to an approval's content.
func rememberContent(content map[string]any, f *cmdFlags) error {
	if err := checkRemember(f); err != nil || !f.always {
		return err
	}
	if _, approval := content["approve"]; !approval {
		return userf("--always answers an approval, not a question")
	}
	if content["approve"] != true {
		return userf("--always goes with approve: a denial is never remembered")
	}
	content["remember"] = string(agent.RememberAgent)
	if f.ruleClient {
		content["client"] = true
	}
	if f.ruleFolder != "" {
		abs, err := filepath.Abs(f.ruleFolder)
		if err != nil {
			return userf("cannot use the folder %q: %v", f.ruleFolder, err)
		}
		content["folder"] = abs
	}
	if f.ruleHost != "" {
		content["host"] = f.ruleHost
	}
	return nil
}
