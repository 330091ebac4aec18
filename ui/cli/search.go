package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// searchShown is how many conversations 'search' lists unless told.
const searchShown = 20

// searchFlags are the flags of 'deskhand search'.
type searchFlags struct {
	agent, client string
	limit         int
}

func (inv *invocation) searchCommand() *cobra.Command {
	f := &searchFlags{}
	c := &cobra.Command{
		Use:   "search TEXT...",
		Short: "find the words in every conversation, newest first",
		Long: `Find the words in every stored conversation (yours and the agents' messages, every
client's), newest first, one line per conversation: when, agent, client, title, and where
the words are.`,
		RunE: func(cmd *cobra.Command, words []string) error { return inv.search(cmd, f, words) },
	}
	c.Flags().StringVar(&f.agent, "agent", "", "only the conversations of this agent (its `SLUG`)")
	c.Flags().StringVar(&f.client, "client", "", "only the conversations of this client (a token's `NAME`, or \"local\" for this computer)")
	c.Flags().IntVar(&f.limit, "limit", searchShown, fmt.Sprintf("list at most `N` conversations (up to %d)", agent.MaxSearchLimit))
	return c
}

// search finds the words through the running app when there is one,
// else on the store.
func (inv *invocation) search(cmd *cobra.Command, f *searchFlags, words []string) error {
	if len(words) == 0 {
		return usagef(cmd, "search what? usage: %s", synopsis(cmd))
	}
	if f.limit < 1 {
		return usagef(cmd, "--limit must be at least 1, not %d", f.limit)
	}
	ctx := cmd.Context()
	req := control.SearchRequest{Text: strings.Join(words, " "), Agent: f.agent, Client: f.client, Limit: f.limit}
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var hits []agent.SearchHit
	if ctl != nil {
		hits, err = ctl.Search(ctx, req)
	} else {
		hits, err = control.CoreSearch(ctx, control.CoreOf(app.Core), req)
	}
	if err != nil {
		return err
	}
	printHits(inv.stdout, req.Text, hits, time.Now())
	return nil
}

// printHits lists the conversations found, or says none was.
func printHits(w io.Writer, text string, hits []agent.SearchHit, now time.Time) {
	if len(hits) == 0 {
		fmt.Fprintf(w, "No conversation holds %q.\n", terminalText(text))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tAGENT\tCLIENT\tCONVERSATION\tFOUND")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", hitTime(h.At, now), cmp.Or(h.AgentSlug, "(deleted agent)"), hitClient(h),
			oneLine(cmp.Or(h.Title, "(untitled)")), oneLine(h.Snippet))
	}
	tw.Flush()
}

// hitTime is when the message was written: the time today, else the date.
func hitTime(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04")
	}
	return t.Format(time.DateOnly)
}

func hitClient(h agent.SearchHit) string {
	switch {
	case h.Principal == agent.LocalPrincipal:
		return "this computer"
	case h.ClientName == "":
		return "(revoked client)"
	}
	return h.ClientName
}

// oneLine keeps a text on its line of the table, safe for a terminal.
func oneLine(s string) string {
	return terminalText(strings.Join(strings.Fields(s), " "))
}
