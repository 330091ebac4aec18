package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// followPage is how many rows --follow prints before the new ones,
// without --since.
const followPage = 20

// logFlags are the flags of 'deskhand log'.
type logFlags struct {
	client, agent, since string
	follow, json         bool
}

func (inv *invocation) logCommand() *cobra.Command {
	f := &logFlags{}
	c := &cobra.Command{
		Use:   "log",
		Short: "the activity log: every MCP request, question and approval",
		Long: `Print the activity log, oldest first: every MCP request, question and approval, with
--client NAME, --agent SLUG, --since DUR, --follow, --json (JSON Lines).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return inv.log(cmd, f) },
	}
	c.Flags().StringVar(&f.client, "client", "", "only the requests of this client (a token's `NAME`)")
	c.Flags().StringVar(&f.agent, "agent", "", "only the requests of this agent (its `SLUG`)")
	c.Flags().StringVar(&f.since, "since", "", "only the last `DUR` of the log: 90m, 24h, 7d")
	c.Flags().BoolVar(&f.follow, "follow", false, "print the last 20 requests (or those of --since), then each new one as it happens, until Ctrl-C (the app must be running)")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON Lines, one object a row (the export format)")
	return c
}

// log prints the activity log, oldest first, then follows it.
func (inv *invocation) log(cmd *cobra.Command, f *logFlags) error {
	ctx := cmd.Context()
	q := control.ActivityQuery{Client: f.client, Agent: f.agent, Limit: 10_000}
	if f.since != "" {
		age, err := agent.ParseLogAge(f.since)
		if err != nil {
			return usagef(cmd, "--since: %v", err)
		}
		q.Since = time.Now().Add(-age)
	}
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	if f.follow && ctl == nil {
		return userf("--follow needs Deskhand running: start it, then run this again")
	}
	show := func(l agent.ActivityRow) error { return printActivity(inv.stdout, l, f.json) }
	if f.follow {
		if f.since == "" {
			q.Limit = followPage // as tail -f: the last few, then the new
		}
		return ctl.FollowActivity(ctx, q, nil, show)
	}
	var lines []agent.ActivityRow
	if ctl != nil {
		lines, err = ctl.Activity(ctx, q)
	} else {
		lines, err = coreActivity(ctx, app.Core, q)
	}
	if err != nil {
		return err
	}
	for _, l := range slices.Backward(lines) { // oldest first, as a log reads
		if err := show(l); err != nil {
			return err
		}
	}
	if len(lines) == 0 && !f.json {
		fmt.Fprintln(inv.stderr, "The log has no such request yet.")
	}
	return nil
}

// coreActivity reads the log of a data folder opened here.
func coreActivity(ctx context.Context, core *agent.Core, q control.ActivityQuery) ([]agent.ActivityRow, error) {
	filter, err := control.ActivityFilterOf(core.Clients().List(), q)
	if err != nil {
		return nil, err
	}
	return core.Activity().List(ctx, filter)
}

// printActivity prints a row: one JSON object a line, or a line to read.
func printActivity(w io.Writer, l agent.ActivityRow, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(l)
	}
	_, err := fmt.Fprintln(w, activityText(l))
	return err
}

// activityText is a row as a person reads it.
func activityText(l agent.ActivityRow) string {
	client := l.ClientName
	if client == "" {
		client = l.Client
	}
	if client == "" {
		client = "-"
	}
	outcome := string(l.Outcome)
	if l.Reason != "" {
		outcome += " (" + l.Reason + ")"
	}
	parts := []string{l.Time.Local().Format("2006-01-02 15:04:05.000"), terminalText(client), terminalText(l.Method)}
	if l.Agent != "" {
		parts = append(parts, l.Agent)
	}
	parts = append(parts, outcome)
	if l.Duration > 0 {
		parts = append(parts, l.Duration.Round(time.Microsecond*100).String())
	}
	if l.BytesIn > 0 || l.BytesOut > 0 {
		parts = append(parts, fmt.Sprintf("%dB in, %dB out", l.BytesIn, l.BytesOut))
	}
	if l.Conversation != "" {
		parts = append(parts, "conversation "+l.Conversation)
	}
	if l.Text != "" {
		parts = append(parts, l.Text)
	}
	if l.Arguments != "" {
		parts = append(parts, "arguments "+l.Arguments)
	}
	return terminalText(strings.Join(parts, "  "))
}
