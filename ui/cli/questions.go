package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// errNotServing: questions live in the running app only.
var errNotServing = &agent.UserError{Msg: "Deskhand is not running with this data folder, so no question is waiting; start it with 'deskhand serve'"}

func (inv *invocation) questionsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "questions",
		Short: "list the questions the agents are waiting on (while Deskhand runs)",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return inv.questions(cmd.Context()) },
	}
}

func (inv *invocation) questions(ctx context.Context) error {
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
