package desktop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// approvalsView lists the approval rules, each with Revoke, and Re-enable
// for one that waits for review; the core's approval_rules_changed event
// refreshes it.
type approvalsView struct {
	app    *App
	core   Core
	rules  []agent.ApprovalRule
	list   *widget.List
	empty  *widget.Label
	status *widget.Label
}

func newApprovalsView(app *App, core Core) *approvalsView {
	v := &approvalsView{app: app, core: core, status: feedback(),
		empty: plainNote("No approval rules. Answer an approval with \"Always allow…\" to stop being asked for what you trust.")}
	v.empty.Wrapping = fyne.TextWrapWord
	v.list = widget.NewList(
		func() int { return len(v.rules) },
		func() fyne.CanvasObject {
			label := widget.NewLabel("rule")
			label.Truncation = fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewButton("Re-enable for every client…", nil), widget.NewButton("Revoke…", nil)), label)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			r := v.rules[i]
			row.Objects[0].(*widget.Label).SetText(ruleLabel(r, v.core.Agents.List(), v.core.Clients.List()))
			buttons := row.Objects[1].(*fyne.Container).Objects
			enable, revoke := buttons[0].(*widget.Button), buttons[1].(*widget.Button)
			enable.OnTapped = func() { v.confirmEnable(r) }
			enable.Hidden = r.Review == ""
			enable.Refresh()
			revoke.SetText("Revoke…")
			if r.Review != "" {
				revoke.SetText("Delete…") // it is off: nothing to revoke
			}
			revoke.OnTapped = func() { v.confirmRevoke(r) }
		})
	return v
}

func (v *approvalsView) content() fyne.CanvasObject {
	intro := plainNote("Calls these rules cover run without asking you. A rule never lets an agent reach more than its folders and hosts allow; revoke one and the next such call asks again.")
	intro.Wrapping = fyne.TextWrapWord
	return container.NewBorder(container.NewVBox(intro, v.empty, v.status), nil, nil, nil, v.list)
}

// refresh reads the rules off fyne's goroutine and shows them.
func (v *approvalsView) refresh() {
	v.app.background(func(ctx context.Context) func() {
		rules, err := v.core.Approvals.Rules(ctx)
		return func() {
			if err != nil {
				say(v.status, "Could not read the approval rules: "+agent.UserMessage(err))
				return
			}
			v.rules = rules
			v.empty.Hidden = len(rules) > 0
			v.empty.Refresh()
			v.list.Refresh()
		}
	})
}

func (v *approvalsView) confirmRevoke(r agent.ApprovalRule) {
	v.confirm("Revoke this rule?", r, "The next such call asks you again.", "Could not revoke the rule: ", v.core.Approvals.Revoke)
}

func (v *approvalsView) confirmEnable(r agent.ApprovalRule) {
	v.confirm("Re-enable this rule for every client?", r, "A client made it by answering \"always\" before a client's rules covered "+
		"that client only, and nobody knows which client it was. Re-enabled, it lets every client's calls it covers run without asking you.",
		"Could not re-enable the rule: ", v.core.Approvals.Enable)
}

// confirm asks before change is made to the rule r, off fyne's goroutine;
// failed says what could not be done. On success the core's event
// refreshes the list.
func (v *approvalsView) confirm(title string, r agent.ApprovalRule, why, failed string, change func(ctx context.Context, id string) error) {
	d := dialog.NewConfirm(title, ruleLabel(r, v.core.Agents.List(), v.core.Clients.List())+"\n\n"+why, func(ok bool) {
		if !ok {
			return
		}
		v.app.background(func(ctx context.Context) func() {
			err := change(ctx, r.ID)
			return func() {
				if err != nil {
					say(v.status, failed+agent.UserMessage(err))
				}
			}
		})
	}, v.app.win)
	v.app.showDialog(d, nil)
}

// ruleLabel is one rule in a line: "scribe may run write_file inside
// /home/a/notes, when cursor calls (since …)", and why it is off.
func ruleLabel(r agent.ApprovalRule, agents []agent.Agent, clients []agent.Client) string {
	who := r.Agent
	for _, a := range agents {
		if a.ID == r.Agent {
			who = agentLabel(a)
		}
	}
	label := fmt.Sprintf("%s may run %s%s (since %s)", who, r.Tool, ruleScope(r, clients), r.CreatedAt.Local().Format(time.DateTime))
	if r.Review != "" {
		label = "Off, " + r.Review + ": " + label
	}
	return label
}

// ruleScope is the narrowing of a rule, for sentences: "" when it covers
// every call.
func ruleScope(r agent.ApprovalRule, clients []agent.Client) string {
	var parts []string
	if r.Folder != "" {
		parts = append(parts, "inside "+r.Folder)
	}
	if r.Host != "" {
		parts = append(parts, "on "+r.Host)
	}
	if r.Client != "" {
		parts = append(parts, "when "+clientName(r.Client, clients)+" calls")
	}
	if len(parts) == 0 {
		return " without asking, every time"
	}
	return " without asking " + strings.Join(parts, ", ")
}

// rememberOption is one way to approve in the popup.
type rememberOption struct {
	label    string
	remember agent.Remember
	folder   bool // the rule's folder comes from the popup's folder field
}

// rememberOptions are the popup's ways to approve a call: once, or always
// (for the agent, the calling client, the call's folder or host, as the
// decoded arguments show them).
func rememberOptions(q agent.Question, client string) []rememberOption {
	out := []rememberOption{
		{label: "Allow once", remember: agent.RememberOnce},
		{label: "Always allow " + q.Tool + " for this agent", remember: agent.RememberAgent},
		{label: "Always allow " + q.Tool + " when " + client + " calls", remember: agent.RememberClient},
	}
	if q.Scope.Folder != "" {
		out = append(out, rememberOption{label: "Always allow " + q.Tool + " inside a folder:", remember: agent.RememberAgent, folder: true})
	}
	if q.Scope.Host != "" {
		out = append(out, rememberOption{label: "Always allow " + q.Tool + " on " + q.Scope.Host, remember: agent.RememberHost})
	}
	return out
}

// approveContent is the popup's approval with the way chosen.
func approveContent(comment string, o rememberOption, folder string) map[string]any {
	content := map[string]any{"approve": true, "comment": comment}
	if o.remember == "" || o.remember == agent.RememberOnce {
		return content
	}
	content["remember"] = string(o.remember)
	if o.folder {
		content["folder"] = strings.TrimSpace(folder)
	}
	return content
}

// ruleHistory is what the popup says of the rules that exist for the
// agent and tool: none of them covered this call, so it asks.
func ruleHistory(rules []agent.ApprovalRule, agentID, tool string, clients []agent.Client) string {
	var lines []string
	for _, r := range rules {
		if r.Agent == agentID && r.Tool == tool {
			lines = append(lines, "• "+tool+ruleScope(r, clients))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "Already allowed (this call is outside them):\n" + strings.Join(lines, "\n")
}

// rememberChooser is the popup's "Always allow…" part.
type rememberChooser struct {
	options []rememberOption
	choice  *widget.Select
	folder  *widget.Entry
	history *widget.Label
	box     fyne.CanvasObject
}

func newRememberChooser(q agent.Question, client string) *rememberChooser {
	c := &rememberChooser{options: rememberOptions(q, client), folder: widget.NewEntry(),
		history: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})}
	labels := make([]string, len(c.options))
	for i, o := range c.options {
		labels[i] = o.label
	}
	c.folder.SetText(q.Scope.Folder)
	c.folder.Hide()
	c.choice = widget.NewSelect(labels, func(label string) {
		if o, ok := c.chosen(); ok && o.folder {
			c.folder.Show()
		} else {
			c.folder.Hide()
		}
	})
	c.choice.SetSelectedIndex(0)
	c.history.Wrapping = fyne.TextWrapWord
	c.history.Hide()
	c.box = container.NewVBox(c.history, c.choice, c.folder)
	return c
}

func (c *rememberChooser) chosen() (rememberOption, bool) {
	i := c.choice.SelectedIndex()
	if i < 0 || i >= len(c.options) {
		return rememberOption{}, false
	}
	return c.options[i], true
}

// content is the approval as chosen.
func (c *rememberChooser) content(comment string) map[string]any {
	o, _ := c.chosen()
	return approveContent(comment, o, c.folder.Text)
}

// showHistory reads the rules for the question's agent and tool off
// fyne's goroutine, where the core can list them.
func (c *rememberChooser) showHistory(app *App, core any, agentID, tool string, clients []agent.Client) {
	rc, ok := core.(Core)
	if !ok || agentID == "" {
		return
	}
	app.background(func(ctx context.Context) func() {
		rules, err := rc.Approvals.Rules(ctx)
		if err != nil {
			return nil
		}
		text := ruleHistory(rules, agentID, tool, clients)
		return func() {
			if text != "" {
				c.history.SetText(text)
				c.history.Show()
			}
		}
	})
}
