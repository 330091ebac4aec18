package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// answerFlags are the flags of 'deskhand answer'.
type answerFlags struct {
	decline        bool
	comment        string
	always, client bool   // always allow, for this client only
	folder, host   string // always allow in this folder, on this host
}

func (inv *invocation) answerCommand() *cobra.Command {
	f := &answerFlags{}
	c := &cobra.Command{
		Use:   "answer ID [TEXT|approve|deny]",
		Short: "answer a question, approve or deny, or decline (while Deskhand runs)",
		Long: `Answer the question ID ('deskhand questions' lists them) with TEXT; for an approval, TEXT
is approve or deny (with --comment for the agent). --decline declines instead. With
--always, an approval also makes a rule: always allow that tool for that agent from now on
(only for this client, inside a folder, on a host when given).`,
		Example: `  deskhand answer 7f3c approve --comment "go ahead"
  deskhand answer 7f3c approve --always --folder ~/notes
  deskhand answer 9a01 "the blue one"
  deskhand answer 9a01 --decline`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 || (len(args) == 1 && !f.decline) {
				return usagef(c, "usage: deskhand answer ID TEXT | deskhand answer ID approve|deny [--comment TEXT] | deskhand answer ID --decline")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return inv.answer(cmd, f, args) },
	}
	c.Flags().BoolVar(&f.decline, "decline", false, "decline the question instead of answering it")
	c.Flags().StringVar(&f.comment, "comment", "", "a comment for the agent with an approval or denial")
	c.Flags().BoolVar(&f.always, "always", false, "approve: always allow this tool for this agent from now on (an approval rule)")
	c.Flags().BoolVar(&f.client, "client", false, "with --always: only when the client that called now calls")
	c.Flags().StringVar(&f.folder, "folder", "", "with --always: only for paths inside this folder")
	c.Flags().StringVar(&f.host, "host", "", "with --always: only for URLs on this host")
	_ = c.MarkFlagDirname("folder")
	return c
}

func (inv *invocation) answer(cmd *cobra.Command, f *answerFlags, words []string) error {
	ctx := cmd.Context()
	if err := checkRemember(f); err != nil {
		return usagef(cmd, "%s", agent.UserMessage(err))
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
		return usagef(cmd, "%s", agent.UserMessage(err))
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

// checkRemember refuses narrowing flags without --always.
func checkRemember(f *answerFlags) error {
	if !f.always && (f.client || f.folder != "" || f.host != "") {
		return userf("--client, --folder and --host narrow --always; add --always")
	}
	return nil
}

// rememberContent adds an "always allow" to an approval's content.
func rememberContent(content map[string]any, f *answerFlags) error {
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
	if f.client {
		content["client"] = true
	}
	if f.folder != "" {
		abs, err := filepath.Abs(f.folder)
		if err != nil {
			return userf("cannot use the folder %q: %v", f.folder, err)
		}
		content["folder"] = abs
	}
	if f.host != "" {
		content["host"] = f.host
	}
	return nil
}
