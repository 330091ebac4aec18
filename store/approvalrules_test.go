package store_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestApprovalRules: rules read back as put, survive a reopen, are
// deleted once, and go with their agent.
func TestApprovalRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deskhand.db")
	db := storetest.OpenAt(t, path)
	writer, other := putAgent(t, db, "writer"), putAgent(t, db, "other")
	rules := []agent.ApprovalRule{
		{ID: "r1", Agent: writer.ID, Tool: "write_file", Folder: "/home/a/notes", CreatedAt: at(10), CreatedBy: agent.ByDesktop},
		{ID: "r2", Agent: writer.ID, Tool: "fetch_url", Client: "client-1", Host: "example.com", CreatedAt: at(20), CreatedBy: agent.ByClient},
		{ID: "r3", Agent: other.ID, Tool: "write_file", CreatedAt: at(30), CreatedBy: agent.ByDesktop},
	}
	for _, r := range rules {
		if err := db.PutApprovalRule(ctx, r); err != nil {
			t.Fatalf("PutApprovalRule(%s): %v", r.ID, err)
		}
	}
	for _, tc := range []struct {
		name string
		r    agent.ApprovalRule
		want error
	}{
		{"unknown agent", agent.ApprovalRule{ID: "x1", Agent: "nobody", Tool: "write_file", CreatedBy: agent.ByDesktop}, agent.ErrNotFound},
		{"made by a rule", agent.ApprovalRule{ID: "x2", Agent: writer.ID, Tool: "write_file", CreatedBy: agent.ByRule}, nil},
		{"same ID", agent.ApprovalRule{ID: "r1", Agent: writer.ID, Tool: "read_file", CreatedBy: agent.ByDesktop}, nil},
	} {
		err := db.PutApprovalRule(ctx, tc.r)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: PutApprovalRule = %v, want an error (%v)", tc.name, err, tc.want)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = storetest.OpenAt(t, path)
	got, err := db.ApprovalRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rules, got); diff != "" {
		t.Errorf("rules after a reopen (-want +got):\n%s", diff)
	}
	if err := db.DeleteApprovalRule(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteApprovalRule(ctx, "r2"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting a deleted rule: %v, want ErrNotFound", err)
	}
	if err := db.DeleteAgent(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = db.ApprovalRules(ctx)
	if diff := cmp.Diff(rules[:1], got); diff != "" {
		t.Errorf("rules after revoking r2 and deleting their agent (-want +got):\n%s", diff)
	}
}

// TestQuestionApprovedByRule: an approval a rule gave reads back as
// answered by that rule.
func TestQuestionApprovedByRule(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "turn", at(100))
	q := pendingQuestion(turn, "q1", 1, at(200))
	q.Kind, q.Text, q.Choices, q.Tool, q.Arguments = agent.KindApproval, "", nil, "write_file", []byte(`{"path":"/n/a"}`)
	q.Status, q.ExpiresAt = agent.QuestionAnswered, q.AskedAt
	q.Answer = &agent.Answer{Approve: true, By: agent.ByRule, Rule: "r1", At: at(200)}
	putQuestion(t, db, q)
	checkQuestions(t, db, conv.ID, q)

	bad := q
	bad.ID, bad.Seq = "q2", 2
	bad.Answer = &agent.Answer{Approve: true, By: agent.ByRule, At: at(200)}
	if err := db.PutQuestion(ctx, bad); err == nil {
		t.Error("an approval by a rule without the rule's ID was stored")
	}
}
