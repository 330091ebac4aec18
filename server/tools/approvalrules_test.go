package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// rulesFixture is a real core, store and catalog, with an agent "scribe"
// whose file tools may use root and need approval, and an approver at
// the desktop.
type rulesFixture struct {
	core   *agent.Core
	db     *store.DB
	root   string
	events <-chan agent.Event
}

func newRulesFixture(t *testing.T) *rulesFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"notes/sub", "notes2", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "notes"), filepath.Join(root, "link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Join(root, "other"), filepath.Join(root, "notes", "escape")); err != nil {
		t.Fatal(err)
	}
	// The model writes where the user message says, then stops.
	model := &agenttest.Model{Reply: func(_ context.Context, _ int, req agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agent.RoleTool {
			return agenttest.Text(last.Content), nil
		}
		return agenttest.Calls("w", tools.NameWriteFile, map[string]any{"path": last.Content, "content": "x"}), nil
	}}
	db := storetest.Open(t)
	core, err := agent.New(t.Context(), agent.Config{History: db, Desktop: true,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}, Tools: tools.Catalog(tools.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: "m", Enabled: true, Folders: []string{root},
		Tools: []agent.AgentTool{{Name: tools.NameWriteFile, NeedsApproval: true}}}); err != nil {
		t.Fatal(err)
	}
	return &rulesFixture{core: core, db: db, root: root,
		events: core.Events().Subscribe(t.Context(), agent.EventQuestionAsked, agent.EventTurnEnded)}
}

// write runs a turn of principal that writes path (relative to root); a
// question asked is answered with answer. It reports whether one was
// asked, and the approval the turn recorded.
func (f *rulesFixture) write(t *testing.T, principal, path string, answer map[string]any) (asked bool, q agent.Question) {
	t.Helper()
	done := make(chan error, 1)
	var res *agent.RunResult
	go func() {
		var err error
		res, err = f.core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "scribe", Principal: principal, Message: filepath.Join(f.root, path)})
		done <- err
	}()
	for ended := false; !ended; {
		e := <-f.events
		switch e.Kind {
		case agent.EventQuestionAsked:
			asked = true
			if err := f.core.Questions().Answer(e.Question, answer, false); err != nil {
				t.Fatalf("answer: %v", err)
			}
		case agent.EventTurnEnded:
			ended = true
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	qs, err := f.db.Questions(t.Context(), res.Conversation.ID)
	if err != nil || len(qs) != 1 {
		t.Fatalf("write %s: questions %+v, %v; want the one approval", path, qs, err)
	}
	return asked, qs[0]
}

var approveOnce = map[string]any{"approve": true}

// TestRuleNarrowedToFolder: "always allow in notes" skips the question
// for what lies in notes as the tool resolves it, and for nothing else:
// not a folder that only starts with the same name, not a way out by ..
// or through a link.
func TestRuleNarrowedToFolder(t *testing.T) {
	f := newRulesFixture(t)
	asked, q := f.write(t, "alice", "notes/first.txt", map[string]any{"approve": true, "remember": "always_folder"})
	if !asked || q.Answer == nil || q.Answer.By != agent.ByDesktop {
		t.Fatalf("the first write: asked %v, approval %+v", asked, q.Answer)
	}
	rules, _ := f.core.Approvals().Rules(t.Context())
	if len(rules) != 1 || rules[0].Folder != filepath.Join(f.root, "notes") || rules[0].Tool != tools.NameWriteFile || rules[0].Client != "" {
		t.Fatalf("rules = %+v, want one for write_file in %s", rules, filepath.Join(f.root, "notes"))
	}
	for _, tc := range []struct {
		path  string
		asked bool
	}{
		{"notes/second.txt", false},
		{"notes/sub/deep.txt", false},
		{"link/through-link.txt", false}, // a link to notes is notes
		{"other/outside.txt", true},
		{"notes2/prefix.txt", true}, // a prefix without the boundary
		{"notes/../other/dotdot.txt", true},
		{"notes/sub/../../notes2/dotdot.txt", true},
		{"notes/escape/via-link.txt", true}, // a link inside notes that leads out
	} {
		t.Run(tc.path, func(t *testing.T) {
			asked, q := f.write(t, "bob", tc.path, approveOnce)
			if asked != tc.asked {
				t.Fatalf("asked = %v, want %v", asked, tc.asked)
			}
			if !tc.asked && (q.Answer == nil || q.Answer.By != agent.ByRule || q.Answer.Rule != rules[0].ID || !q.Answer.Approve) {
				t.Errorf("recorded approval %+v, want one by rule %s", q.Answer, rules[0].ID)
			}
		})
	}
}

// TestRuleForOneClient: a rule for client A does not apply to client B.
func TestRuleForOneClient(t *testing.T) {
	f := newRulesFixture(t)
	if asked, _ := f.write(t, "client-a", "other/1.txt", map[string]any{"approve": true, "remember": "always_client"}); !asked {
		t.Fatal("the first write was not asked")
	}
	for _, tc := range []struct {
		principal string
		asked     bool
	}{{"client-a", false}, {"client-b", true}, {"client-a", false}} {
		if asked, _ := f.write(t, tc.principal, "notes/2.txt", approveOnce); asked != tc.asked {
			t.Errorf("%s: asked = %v, want %v", tc.principal, asked, tc.asked)
		}
	}
}

// TestRevokedRuleAsksAgain: revoking a rule makes the next call ask, and
// a denial is never remembered.
func TestRevokedRuleAsksAgain(t *testing.T) {
	f := newRulesFixture(t)
	changed := f.core.Events().Subscribe(t.Context(), agent.EventApprovalRulesChanged)
	if asked, _ := f.write(t, "p", "notes/1.txt", map[string]any{"approve": false, "remember": "always"}); !asked {
		t.Fatal("not asked")
	}
	if rules, _ := f.core.Approvals().Rules(t.Context()); len(rules) != 0 {
		t.Fatalf("a denial made rules %+v", rules)
	}
	f.write(t, "p", "notes/1.txt", map[string]any{"approve": true, "remember": "always"})
	<-changed
	if asked, _ := f.write(t, "p", "other/2.txt", approveOnce); asked {
		t.Fatal("a rule for every path still asked")
	}
	rules, _ := f.core.Approvals().Rules(t.Context())
	if len(rules) != 1 {
		t.Fatalf("rules = %+v", rules)
	}
	if err := f.core.Approvals().Revoke(t.Context(), rules[0].ID); err != nil {
		t.Fatal(err)
	}
	<-changed
	if asked, _ := f.write(t, "p", "other/3.txt", approveOnce); !asked {
		t.Error("a revoked rule still let the call run without asking")
	}
	if err := f.core.Approvals().Revoke(t.Context(), rules[0].ID); err == nil {
		t.Error("revoking a revoked rule succeeded")
	}
	if stored, _ := f.db.ApprovalRules(t.Context()); len(stored) != 0 {
		t.Errorf("the store still has %+v", stored)
	}
}

// TestApprovalScope: where each tool's call reaches, as rules see it.
func TestApprovalScope(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := agent.Agent{Folders: []string{root}}
	byName := map[string]agent.Tool{}
	for _, tool := range tools.Catalog(tools.Options{}) {
		byName[tool.Spec().Name] = tool
	}
	for _, tc := range []struct {
		tool, args string
		want       agent.ApprovalScope
		fails      bool
	}{
		{tools.NameWriteFile, `{"path":"a/b.txt","content":""}`, agent.ApprovalScope{Path: filepath.Join(root, "a", "b.txt"), Folder: filepath.Join(root, "a")}, false},
		{tools.NameReadFile, `{"path":"` + filepath.ToSlash(filepath.Join(root, "x", "..", "c.txt")) + `"}`, agent.ApprovalScope{Path: filepath.Join(root, "c.txt"), Folder: root}, false},
		{tools.NameListDir, `{"path":"."}`, agent.ApprovalScope{Path: root, Folder: root}, false},
		{tools.NameWriteFile, `{"path":"../outside.txt","content":""}`, agent.ApprovalScope{}, true},
		{tools.NameFetchURL, `{"url":" https://Example.COM:8443/page?q=1 "}`, agent.ApprovalScope{Host: "example.com"}, false},
		{tools.NameFetchURL, `{"url":"not a url"}`, agent.ApprovalScope{}, true},
	} {
		got, err := byName[tc.tool].(agent.ApprovalScoper).ApprovalScope(a, json.RawMessage(tc.args))
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("%s %s: %+v, %v; want %+v (fails %v)", tc.tool, tc.args, got, err, tc.want, tc.fails)
		}
	}
}
