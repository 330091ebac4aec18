package desktop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
)

// approvalsOf are the approval rules kept in store, read afresh: a rule a
// test puts there is listed at the next read.
func approvalsOf(store *agenttest.ApprovalRules) *agent.Approvals {
	a, _ := store.Approvals(context.Background()) // a store in memory does not fail
	return a
}

// The fakes have no approval rules unless a test gives some.
func (f *fakeQuestions) Approvals() *agent.Approvals { return approvalsOf(&agenttest.ApprovalRules{}) }

// rulesFake is the questions' fake with rules.
type rulesFake struct {
	*questionsFake
	rules agenttest.ApprovalRules
}

func (f *rulesFake) asCore() Core {
	c := f.questionsFake.asCore()
	c.Approvals = approvalsOf(&f.rules)
	return c
}

func TestRememberOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scope  agent.ApprovalScope
		labels []string
	}{
		{"no scope", agent.ApprovalScope{}, []string{"Allow once", "Always allow write_file for this agent", "Always allow write_file when Cursor calls"}},
		{"a file", agent.ApprovalScope{Path: "/n/a.txt", Folder: "/n"}, []string{"Allow once", "Always allow write_file for this agent", "Always allow write_file when Cursor calls", "Always allow write_file inside a folder:"}},
		{"a host", agent.ApprovalScope{Host: "example.com"}, []string{"Allow once", "Always allow write_file for this agent", "Always allow write_file when Cursor calls", "Always allow write_file on example.com"}},
	} {
		var labels []string
		for _, o := range rememberOptions(agent.Question{Tool: "write_file", Scope: tc.scope}, "Cursor") {
			labels = append(labels, o.label)
		}
		if diff := cmp.Diff(tc.labels, labels); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestRuleTexts(t *testing.T) {
	clients := []agent.Client{{ID: "c1", Name: "Cursor"}}
	rules := []agent.ApprovalRule{
		{ID: "r1", Agent: "a1", Tool: "write_file", Folder: "/n", Client: "c1"},
		{ID: "r2", Agent: "a1", Tool: "fetch_url", Host: "example.com"},
		{ID: "r3", Agent: "a2", Tool: "write_file"},
	}
	if got, want := ruleHistory(rules, "a1", "write_file", clients), "Already allowed (this call is outside them):\n• write_file without asking inside /n, when Cursor calls"; got != want {
		t.Errorf("history = %q, want %q", got, want)
	}
	if got := ruleHistory(rules, "a1", "read_file", clients); got != "" {
		t.Errorf("history of a tool without rules = %q", got)
	}
	r := rules[2]
	r.CreatedAt = time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	if got, want := ruleLabel(r, []agent.Agent{{ID: "a2", Slug: "scribe"}}, clients), "scribe may run write_file without asking, every time (since 2026-12-01 10:00:00)"; got != want {
		t.Errorf("label = %q, want %q", got, want)
	}
}

// TestApprovalPopupAlwaysAllow: the popup's "Always allow…" sends the
// narrowing chosen, the folder prefilled from the decoded arguments and
// editable, and shows the rules that exist for the agent and tool.
func TestApprovalPopupAlwaysAllow(t *testing.T) {
	q := agent.Question{ID: "a1", Kind: agent.KindApproval, Agent: "scribe", Tool: "write_file", Principal: "client-1",
		Arguments: json.RawMessage(`{"path":"/home/a/notes/x.txt","content":"hello"}`), AskedAt: askedAt, ExpiresAt: askedAt.Add(time.Minute),
		Scope: agent.ApprovalScope{Path: "/home/a/notes/x.txt", Folder: "/home/a/notes"}}
	qf := questionsWith(q)
	qf.agents[1].ID = "id-scribe"
	core := &rulesFake{questionsFake: qf, rules: agenttest.ApprovalRules{Rules: []agent.ApprovalRule{{ID: "r", Agent: "id-scribe", Tool: "write_file", Host: "example.com"}}}}
	a, u := newShell(t)
	a.questions = newQuestionsView(a, core.asCore())
	a.win.SetContent(a.questions.content())
	v := a.questions
	v.popup("a1")
	p := v.popups["a1"]
	u.runQueued()
	if !popupSays(p.win.Content(), "Already allowed (this call is outside them):\n• write_file without asking on example.com") {
		t.Errorf("no history; the popup says %q", popupLabels(p.win.Content()))
	}
	if p.remember.folder.Text != "/home/a/notes" || p.remember.folder.Visible() {
		t.Errorf("folder field %q (shown %v), want /home/a/notes, hidden until chosen", p.remember.folder.Text, p.remember.folder.Visible())
	}
	p.remember.choice.SetSelectedIndex(3)
	if !p.remember.folder.Visible() {
		t.Error("the folder field is hidden once chosen")
	}
	p.remember.folder.SetText("/home/a")
	test.Tap(p.approve)
	want := []map[string]any{{"approve": true, "comment": "", "remember": "always", "folder": "/home/a"}}
	if !cmp.Equal(core.answers, want) {
		t.Errorf("answers = %v, want %v", core.answers, want)
	}
	p.remember.choice.SetSelectedIndex(2)
	test.Tap(p.approve)
	if got := core.answers[len(core.answers)-1]; got["remember"] != "always_client" || strings.Contains(got["remember"].(string), "folder") || got["folder"] != nil {
		t.Errorf("this client's answer = %v", got)
	}
}

// A call a rule let run reads, in the transcript, as approved by the rule.
func TestTranscriptSaysApprovedByRule(t *testing.T) {
	q := agent.Question{Kind: agent.KindApproval, Tool: "write_file", Status: agent.QuestionAnswered,
		Answer: &agent.Answer{Approve: true, By: agent.ByRule, Rule: "r1"}}
	note, bad := answerNote(q, speakers{Client: "Cursor"})
	if want := `approved by your "always allow" rule, without asking`; note != want || bad {
		t.Errorf("note = %q (%v), want %q", note, bad, want)
	}
}

// approvalsFake is approvalsCore with rules in memory.
type approvalsFake struct {
	store agenttest.ApprovalRules
}

func (f *approvalsFake) asCore() Core {
	return Core{Approvals: approvalsOf(&f.store),
		Agents:  agentList{list: []agent.Agent{{ID: "a1", Slug: "scribe"}}},
		Clients: clientList{list: []agent.Client{{ID: "c1", Name: "Cursor"}}}}
}

// Settings → Approvals lists the rules, says when there is none, and
// revokes one after a confirmation.
func TestApprovalsTab(t *testing.T) {
	a, u := newShell(t)
	core := &approvalsFake{}
	a.approvals = newApprovalsView(a, core.asCore())
	a.win.SetContent(a.approvals.content())
	v := a.approvals
	v.refresh()
	u.settle()
	if len(v.rules) != 0 || !v.empty.Visible() {
		t.Fatalf("no rules: %d listed, empty note shown %v", len(v.rules), v.empty.Visible())
	}
	core.store.Rules = []agent.ApprovalRule{{ID: "r1", Agent: "a1", Tool: "write_file", Folder: "/n", Client: "c1"}}
	v.core.Approvals = approvalsOf(&core.store) // the rules are read when the core starts
	v.refresh()
	u.settle()
	if len(v.rules) != 1 || v.empty.Visible() || v.list.Length() != 1 {
		t.Fatalf("one rule: %d listed, empty note shown %v", len(v.rules), v.empty.Visible())
	}
	v.confirmRevoke(v.rules[0])
	if len(a.dialogs) != 1 {
		t.Fatalf("%d dialogs open, want the confirmation", len(a.dialogs))
	}
	tapYes(t, a)
	u.settle()
	if len(core.store.Rules) != 0 {
		t.Errorf("rules after the revoke: %+v", core.store.Rules)
	}
}

// tapYes taps Yes in the dialog on top.
func tapYes(t *testing.T, a *App) {
	t.Helper()
	var yes *widget.Button
	walk(t, a.win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && b.Text == "Yes" {
			yes = b
		}
		return false
	})
	if yes == nil {
		t.Fatal("the confirmation has no Yes")
	}
	test.Tap(yes)
}

// A rule that waits for review (a client's rule for every client, from
// before clients' rules were pinned) says so and why, offers Re-enable for
// every client and Delete; a rule that is on offers Revoke alone.
func TestApprovalsTabReview(t *testing.T) {
	a, u := newShell(t)
	core := &approvalsFake{store: agenttest.ApprovalRules{Rules: []agent.ApprovalRule{
		{ID: "r1", Agent: "a1", Tool: "write_file", CreatedBy: agent.ByClient, Review: agent.ReviewUnpinned},
		{ID: "r2", Agent: "a1", Tool: "read_file", CreatedBy: agent.ByDesktop},
	}}}
	a.approvals = newApprovalsView(a, core.asCore())
	a.win.SetContent(a.approvals.content())
	v := a.approvals
	v.refresh()
	u.settle()
	row := func(i int) (label string, buttons []string) {
		o := v.list.CreateItem()
		v.list.UpdateItem(i, o)
		walk(t, o, func(o fyne.CanvasObject) bool {
			switch w := o.(type) {
			case *widget.Label:
				label = w.Text
			case *widget.Button:
				if w.Visible() {
					buttons = append(buttons, w.Text)
				}
			}
			return false
		})
		return label, buttons
	}
	if label, buttons := row(0); !strings.HasPrefix(label, "Off, "+agent.ReviewUnpinned+": scribe may run write_file") ||
		!cmp.Equal(buttons, []string{"Re-enable for every client…", "Delete…"}) {
		t.Errorf("the rule to review: %q %v", label, buttons)
	}
	if label, buttons := row(1); strings.Contains(label, "Off") || !cmp.Equal(buttons, []string{"Revoke…"}) {
		t.Errorf("a rule that is on: %q %v", label, buttons)
	}
	v.confirmEnable(v.rules[0])
	tapYes(t, a)
	u.settle()
	if core.store.Rules[0].Review != "" {
		t.Errorf("the rule after re-enabling it: %+v", core.store.Rules[0])
	}
}
