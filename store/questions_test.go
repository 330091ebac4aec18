package store_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// beginTurn records a running turn of conv.
func beginTurn(t *testing.T, db *store.DB, conv agent.Conversation, id string, start time.Time) agent.Turn {
	t.Helper()
	turn, user := runningTurn(conv, id, start)
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	return turn
}

// pendingQuestion is the turn's seq-th question, asked at asked.
func pendingQuestion(turn agent.Turn, id string, seq int, asked time.Time) agent.Question {
	return agent.Question{
		ID: id, Kind: agent.KindQuestion, Agent: "helper",
		ConversationID: turn.ConversationID, TurnID: turn.ID, Principal: turn.Principal, Seq: seq,
		Text: "Which city?", Choices: []string{"Paris", "Lyon", `"Nice" & <Cannes>`},
		AskedAt: asked, ExpiresAt: asked.Add(agent.DefaultQuestionTimeout), Status: agent.QuestionPending,
	}
}

func putQuestion(t *testing.T, db *store.DB, q agent.Question) {
	t.Helper()
	if err := db.PutQuestion(ctx, q); err != nil {
		t.Fatalf("PutQuestion(%s, %s): %v", q.ID, q.Status, err)
	}
}

func checkQuestions(t *testing.T, db *store.DB, conversationID string, want ...agent.Question) {
	t.Helper()
	got, err := db.Questions(ctx, conversationID)
	if err != nil {
		t.Fatalf("Questions: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Questions (-want +got):\n%s", diff)
	}
}

func TestQuestionAnsweredByDesktop(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "turn", at(100))

	q := pendingQuestion(turn, "q1", 1, at(200))
	putQuestion(t, db, q)
	checkQuestions(t, db, conv.ID, q)

	answered := q
	answered.Status = agent.QuestionAnswered
	answered.Answer = &agent.Answer{Text: "Lyon", By: agent.ByDesktop, At: at(4200)}
	putQuestion(t, db, answered)
	checkQuestions(t, db, conv.ID, answered)

	// Only the status and answer change: what was asked stays as asked.
	rewritten := answered
	rewritten.Text, rewritten.Choices, rewritten.Seq, rewritten.AskedAt = "Which town?", nil, 7, at(300)
	putQuestion(t, db, rewritten)
	checkQuestions(t, db, conv.ID, answered)
}

// TestApprovalArgumentsKeptIntact: an approval's arguments read back byte
// for byte, whatever they are, and so do both answers.
func TestApprovalArgumentsKeptIntact(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "turn", at(100))

	var want []agent.Question
	for i, args := range []json.RawMessage{
		json.RawMessage("{ \"path\" :\n\t\"a b.txt\" , \"n\": 1.50 }"),
		json.RawMessage(`{"q":"<b>&amp;</b>","e":"\u00e9\n"}`),
		json.RawMessage(" {\"a\": 1}\n"),
		json.RawMessage(`{"path": "unterminated`),
		nil,
	} {
		q := agent.Question{
			ID: "approval-" + string(rune('a'+i)), Kind: agent.KindApproval, Agent: "helper",
			ConversationID: conv.ID, TurnID: turn.ID, Principal: turn.Principal, Seq: i + 1,
			Tool: "write_file", Arguments: args,
			AskedAt: at(200 + i), ExpiresAt: at(60_200 + i), Status: agent.QuestionPending,
		}
		putQuestion(t, db, q)
		q.Status = agent.QuestionAnswered
		q.Answer = &agent.Answer{Approve: i%2 == 0, By: agent.ByClient, At: at(1000 + i)}
		if i == 1 {
			q.Answer.Comment = "not that file"
		}
		putQuestion(t, db, q)
		want = append(want, q)
	}
	checkQuestions(t, db, conv.ID, want...)
	got, err := db.Questions(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	// cmp compared the bytes already; say it plainly, nil (no arguments) included.
	for i, q := range got {
		if string(q.Arguments) != string(want[i].Arguments) || (q.Arguments == nil) != (want[i].Arguments == nil) {
			t.Errorf("%s: Arguments = %q, want %q", q.ID, q.Arguments, want[i].Arguments)
		}
	}
}

func TestQuestionDeclined(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "turn", at(100))

	q := pendingQuestion(turn, "q1", 1, at(200))
	putQuestion(t, db, q)
	q.Status = agent.QuestionDeclined
	q.Answer = &agent.Answer{Declined: true, By: agent.ByClient, At: at(900)}
	putQuestion(t, db, q)

	approval := agent.Question{
		ID: "q2", Kind: agent.KindApproval, Agent: "helper",
		ConversationID: conv.ID, TurnID: turn.ID, Principal: turn.Principal, Seq: 2,
		Tool: "delete_file", Arguments: json.RawMessage(`{"path":"x"}`),
		AskedAt: at(1000), ExpiresAt: at(2000), Status: agent.QuestionPending,
	}
	putQuestion(t, db, approval)
	approval.Status = agent.QuestionDeclined
	approval.Answer = &agent.Answer{Declined: true, By: agent.ByDesktop, At: at(1500)}
	putQuestion(t, db, approval)

	// Questions the turn gave up on have no answer.
	cancelled := pendingQuestion(turn, "q3", 3, at(3000))
	putQuestion(t, db, cancelled)
	cancelled.Status = agent.QuestionCancelled
	putQuestion(t, db, cancelled)

	checkQuestions(t, db, conv.ID, q, approval, cancelled)
}

// TestQuestionsInAskedOrder: across turns (whose seq starts again at 1),
// questions come in the order asked; ties in the order recorded.
func TestQuestionsInAskedOrder(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	conv := createConversation(t, db, a, "conv")
	other := createConversation(t, db, a, "other")
	first := beginTurn(t, db, conv, "first", at(100))
	second := beginTurn(t, db, conv, "second", at(5000))
	elsewhere := beginTurn(t, db, other, "elsewhere", at(100))

	qs := []agent.Question{
		pendingQuestion(second, "s1", 1, at(6000)),
		pendingQuestion(first, "f1", 1, at(200)),
		pendingQuestion(first, "f2", 2, at(300)),
		pendingQuestion(second, "s2", 2, at(6000)),
		pendingQuestion(elsewhere, "e1", 1, at(50)),
	}
	for _, q := range qs {
		putQuestion(t, db, q)
	}
	checkQuestions(t, db, conv.ID, qs[1], qs[2], qs[0], qs[3])
	checkQuestions(t, db, other.ID, qs[4])
}

func TestPutQuestionNotFound(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	conv := createConversation(t, db, a, "conv")
	other := createConversation(t, db, a, "other")
	turn := beginTurn(t, db, conv, "turn", at(100))
	for _, tc := range []struct {
		name         string
		conv, turnID string
	}{
		{"no conversation", "nope", turn.ID},
		{"no turn", conv.ID, "nope"},
		{"neither", "nope", "nope"},
		{"turn of another conversation", other.ID, turn.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := pendingQuestion(turn, "q-"+tc.name, 1, at(200))
			q.ConversationID, q.TurnID = tc.conv, tc.turnID
			if err := db.PutQuestion(ctx, q); !errors.Is(err, agent.ErrNotFound) {
				t.Errorf("PutQuestion = %v, want an error wrapping agent.ErrNotFound", err)
			}
		})
	}
	if _, err := db.Questions(ctx, "nope"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("Questions of an unknown conversation = %v, want agent.ErrNotFound", err)
	}
	// An existing conversation without questions is empty, not missing.
	for _, id := range []string{conv.ID, other.ID} {
		if qs, err := db.Questions(ctx, id); err != nil || len(qs) != 0 {
			t.Errorf("Questions(%s) = %v, %v; want none, nil", id, qs, err)
		}
	}
}

// TestPutQuestionRefusesMismatchedAnswer: the answer is stored exactly
// when the status says answered or declined, so a question that says
// otherwise could not read back as it was put.
func TestPutQuestionRefusesMismatchedAnswer(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "turn", at(100))
	reply := &agent.Answer{Text: "Paris", By: agent.ByDesktop, At: at(300)}
	for _, tc := range []struct {
		name   string
		status agent.QuestionStatus
		answer *agent.Answer
	}{
		{"answered without an answer", agent.QuestionAnswered, nil},
		{"declined without an answer", agent.QuestionDeclined, nil},
		{"pending with an answer", agent.QuestionPending, reply},
		{"expired with an answer", agent.QuestionExpired, reply},
		{"declined with a reply", agent.QuestionDeclined, reply},
		{"answered with a decline", agent.QuestionAnswered, &agent.Answer{Declined: true, By: agent.ByClient}},
		{"unknown status", "lost", nil},
		{"unknown answerer", agent.QuestionAnswered, &agent.Answer{Text: "Paris", By: "phone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := pendingQuestion(turn, "q", 1, at(200))
			q.Status, q.Answer = tc.status, tc.answer
			if err := db.PutQuestion(ctx, q); err == nil {
				t.Error("PutQuestion succeeded")
			}
		})
	}
	checkQuestions(t, db, conv.ID)
}

// TestExpirePendingQuestionsAfterUncleanStop: a question still pending
// when the process stopped is found by the next one and expired, as its
// turn is interrupted; answered ones are left alone.
func TestExpirePendingQuestionsAfterUncleanStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db := storetest.OpenAt(t, path)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn := beginTurn(t, db, conv, "cut-short", at(100))
	answered := pendingQuestion(turn, "answered", 1, at(200))
	putQuestion(t, db, answered)
	answered.Status, answered.Answer = agent.QuestionAnswered, &agent.Answer{Text: "Paris", By: agent.ByClient, At: at(250)}
	putQuestion(t, db, answered)
	waiting := pendingQuestion(turn, "waiting", 2, at(300)) // expires at 600_300
	putQuestion(t, db, waiting)
	lapsed := pendingQuestion(turn, "lapsed", 3, at(400))
	lapsed.ExpiresAt = at(500) // its deadline passed before the restart
	putQuestion(t, db, lapsed)
	if err := db.Close(); err != nil { // no answer, no EndTurn
		t.Fatal(err)
	}

	db = storetest.OpenAt(t, path)
	checkQuestions(t, db, conv.ID, answered, waiting, lapsed)
	if n, err := db.InterruptRunningTurns(ctx, at(60_000)); err != nil || n != 1 {
		t.Fatalf("InterruptRunningTurns = %d, %v; want 1, nil", n, err)
	}
	if n, err := db.ExpirePendingQuestions(ctx, at(60_000)); err != nil || n != 2 {
		t.Fatalf("ExpirePendingQuestions = %d, %v; want 2, nil", n, err)
	}
	if n, err := db.ExpirePendingQuestions(ctx, at(61_000)); err != nil || n != 0 {
		t.Errorf("second ExpirePendingQuestions = %d, %v; want 0, nil", n, err)
	}
	// The wait ended at the restart at the latest; nobody answered.
	waiting.Status, waiting.ExpiresAt = agent.QuestionExpired, at(60_000)
	lapsed.Status = agent.QuestionExpired
	checkQuestions(t, db, conv.ID, answered, waiting, lapsed)
}

func TestPutAgentRefusesUnknownRouting(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	a.Routing = "email"
	err := db.PutAgent(ctx, a)
	if err == nil || !strings.Contains(err.Error(), `routing "email"`) {
		t.Fatalf("PutAgent with routing email = %v, want an error naming it", err)
	}
	got, err := db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Routing != "" {
		t.Errorf("agents after a refused put = %+v, want the helper with default routing", got)
	}
}
