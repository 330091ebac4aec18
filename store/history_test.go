package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// The store keeps times in milliseconds, so fixtures are whole
// milliseconds and compare exactly (cmp uses time.Time.Equal, so the
// location does not matter). TestTimesKeepMilliseconds covers finer times.
var t0 = time.Date(2026, time.March, 1, 9, 30, 0, 0, time.FixedZone("CET", 60*60))

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

var ctx = context.Background()

func putAgent(t *testing.T, db *store.DB, slug string) agent.Agent {
	t.Helper()
	a := agent.Agent{
		ID: "agent-" + slug, Slug: slug, Name: slug, Backend: agent.BackendOllama, Model: "llama3.2",
		Conversations: true, Enabled: true, CreatedAt: at(0), UpdatedAt: at(0),
	}
	if err := db.PutAgent(ctx, a); err != nil {
		t.Fatalf("PutAgent: %v", err)
	}
	return a
}

func createConversation(t *testing.T, db *store.DB, a agent.Agent, id string) agent.Conversation {
	t.Helper()
	c := agent.Conversation{ID: id, AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(1), UpdatedAt: at(1)}
	if err := db.CreateConversation(ctx, c); err != nil {
		t.Fatalf("CreateConversation: %v", err)
	}
	return c
}

func runningTurn(c agent.Conversation, id string, start time.Time) (agent.Turn, agent.Message) {
	t := agent.Turn{
		ID: id, ConversationID: c.ID, AgentID: c.AgentID, Principal: c.Principal,
		Status: agent.TurnRunning, Model: "llama3.2", StartedAt: start,
	}
	return t, agent.Message{Role: agent.RoleUser, Content: "question of " + id, TurnID: id, CreatedAt: start}
}

func TestAgentsRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	full := agent.Agent{
		ID: "a1", Slug: "researcher", Name: "Researcher", Description: "Finds things.",
		Prompt: "You research.\nBe brief.", Backend: agent.BackendClient, Model: "claude",
		ResponseSchema: json.RawMessage(`{ "type": "object",  "required": ["answer"] }`),
		Conversations:  true, Enabled: true,
		Tools:     []agent.AgentTool{{Name: "read_file"}, {Name: "write_file", NeedsApproval: true}, {Name: "web_search"}},
		Folders:   []string{"/home/ann/notes", `C:\Users\Ann\Documents & "Drafts" <2026>`},
		MaxRounds: 12, Routing: agent.RouteDesktop, QuestionTimeout: 90 * time.Second,
		StarterPrompts:   []string{"Find three sources on \"local-first\" software.", "Summarise my notes"},
		ClientMayApprove: true, ReachableHosts: []string{"nas.local:8080", "[fd00::5]:80"},
		CreatedAt: at(10), UpdatedAt: at(20),
	}
	bare := agent.Agent{ID: "a2", Slug: "echo", Backend: agent.BackendOllama, CreatedAt: at(30), UpdatedAt: at(30)}

	got, err := db.Agents(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("Agents of an empty store = %v, %v; want none", got, err)
	}
	for _, a := range []agent.Agent{full, bare} {
		if err := db.PutAgent(ctx, a); err != nil {
			t.Fatalf("PutAgent(%s): %v", a.Slug, err)
		}
	}
	got, err = db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.Agent{bare, full}, got); diff != "" { // slug order
		t.Errorf("Agents (-want +got):\n%s", diff)
	}

	// Put again by ID replaces every field, the slug included.
	edited := full
	edited.Slug, edited.Name, edited.ResponseSchema, edited.Tools, edited.Folders = "analyst", "Analyst", nil, nil, nil
	edited.Conversations, edited.Enabled, edited.MaxRounds, edited.UpdatedAt = false, false, 0, at(40)
	edited.Routing, edited.QuestionTimeout, edited.ClientMayApprove, edited.ReachableHosts = "", 0, false, nil
	if err := db.PutAgent(ctx, edited); err != nil {
		t.Fatalf("PutAgent(edited): %v", err)
	}
	got, err = db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.Agent{edited, bare}, got); diff != "" {
		t.Errorf("Agents after an edit (-want +got):\n%s", diff)
	}
}

func TestPutAgentSlugTaken(t *testing.T) {
	db := storetest.Open(t)
	first := putAgent(t, db, "writer")

	// Keeping one's own slug is fine.
	first.Name = "Writer 2"
	if err := db.PutAgent(ctx, first); err != nil {
		t.Fatalf("PutAgent with its own slug: %v", err)
	}
	for _, tc := range []struct {
		name string
		a    agent.Agent
	}{
		{"new agent", agent.Agent{ID: "other", Slug: "writer", Backend: agent.BackendOllama}},
		{"renamed agent", func() agent.Agent { a := putAgent(t, db, "editor"); a.Slug = "writer"; return a }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.PutAgent(ctx, tc.a)
			if !errors.Is(err, agent.ErrSlugTaken) {
				t.Fatalf("PutAgent = %v, want agent.ErrSlugTaken", err)
			}
			if got := agent.UserMessage(err); got != agent.ErrSlugTaken.Msg {
				t.Errorf("UserMessage = %q, want %q", got, agent.ErrSlugTaken.Msg)
			}
		})
	}
	got, err := db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, a := range got {
		slugs = append(slugs, a.Slug+"="+a.ID)
	}
	if diff := cmp.Diff([]string{"editor=agent-editor", "writer=agent-writer"}, slugs); diff != "" {
		t.Errorf("agents after refused puts (-want +got):\n%s", diff)
	}
}

func TestClientsRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	hash := func(b byte) []byte { h := make([]byte, 32); h[0] = b; return h }
	cursor := agent.Client{ID: "c1", Name: "Cursor", TokenHash: hash(1), CreatedAt: at(1)}
	claude := agent.Client{ID: "c2", Name: "Claude", TokenHash: hash(2), CreatedAt: at(2), LastUsedAt: at(3)}
	for _, c := range []agent.Client{cursor, claude} {
		if err := db.PutClient(ctx, c); err != nil {
			t.Fatalf("PutClient(%s): %v", c.Name, err)
		}
	}
	check := func(want ...agent.Client) {
		t.Helper()
		got, err := db.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Clients (-want +got):\n%s", diff)
		}
	}
	check(cursor, claude)

	if err := db.TouchClient(ctx, cursor.ID, at(50)); err != nil {
		t.Fatalf("TouchClient: %v", err)
	}
	cursor.LastUsedAt = at(50)
	check(cursor, claude)

	// Two active clients may not share a name...
	if err := db.PutClient(ctx, agent.Client{ID: "c3", Name: "Cursor", TokenHash: hash(3), CreatedAt: at(60)}); err == nil {
		t.Error("PutClient of a second active client named Cursor succeeded")
	}
	// ...but a revoked one's name is free again.
	cursor.RevokedAt = at(70)
	if err := db.PutClient(ctx, cursor); err != nil {
		t.Fatalf("PutClient(revoked): %v", err)
	}
	again := agent.Client{ID: "c3", Name: "Cursor", TokenHash: hash(3), CreatedAt: at(80)}
	if err := db.PutClient(ctx, again); err != nil {
		t.Fatalf("PutClient of a new Cursor after revoking the old: %v", err)
	}
	check(cursor, claude, again)
}

func TestSettings(t *testing.T) {
	db := storetest.Open(t)
	if _, err := db.Setting(ctx, "ollama_url"); !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("Setting of an unset key = %v, want agent.ErrNotFound", err)
	}
	for _, v := range []string{"http://127.0.0.1:11434", "", "http://gpu-box:11434"} {
		if err := db.SetSetting(ctx, "ollama_url", v); err != nil {
			t.Fatalf("SetSetting(%q): %v", v, err)
		}
		got, err := db.Setting(ctx, "ollama_url")
		if err != nil || got != v {
			t.Errorf("Setting = %q, %v; want %q", got, err, v)
		}
	}
}

func TestConversationRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	want := agent.Conversation{ID: "conv-1", AgentID: a.ID, Principal: agent.LocalPrincipal, Title: "Plan the trip", CreatedAt: at(5), UpdatedAt: at(6)}
	if err := db.CreateConversation(ctx, want); err != nil {
		t.Fatalf("CreateConversation: %v", err)
	}
	got, err := db.Conversation(ctx, want.ID)
	if err != nil {
		t.Fatalf("Conversation: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Conversation (-want +got):\n%s", diff)
	}
	if err := db.CreateConversation(ctx, want); err == nil {
		t.Error("CreateConversation with a used ID succeeded")
	}
}

// TestForeignKeysEnforced: a conversation cannot name an agent that does
// not exist, and a turn cannot name a conversation that does not.
func TestForeignKeysEnforced(t *testing.T) {
	db := storetest.Open(t)
	err := db.CreateConversation(ctx, agent.Conversation{ID: "orphan", AgentID: "no-such-agent", Principal: "p", CreatedAt: at(0), UpdatedAt: at(0)})
	if !errors.Is(err, agent.ErrNotFound) {
		t.Fatalf("CreateConversation with an unknown agent = %v, want agent.ErrNotFound", err)
	}
	if _, err := db.Conversation(ctx, "orphan"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("the refused conversation was stored (Conversation = %v)", err)
	}
	turn, user := runningTurn(agent.Conversation{ID: "orphan", AgentID: "no-such-agent"}, "t1", at(1))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("BeginTurn in an unknown conversation = %v, want agent.ErrNotFound", err)
	}
}

func TestNotFound(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	empty := createConversation(t, db, a, "empty")
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Conversation", func() error { _, err := db.Conversation(ctx, "nope"); return err }},
		{"Messages", func() error { _, err := db.Messages(ctx, "nope"); return err }},
		{"Turns", func() error { _, err := db.Turns(ctx, "nope"); return err }},
		{"BeginTurn", func() error {
			turn, user := runningTurn(agent.Conversation{ID: "nope", AgentID: a.ID}, "t-nope", at(1))
			return db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})()
		}},
		{"EndTurn", func() error {
			return db.EndTurn(ctx, agent.Turn{ID: "nope", Status: agent.TurnCompleted, EndedAt: at(2)}, nil)
		}},
		{"TouchClient", func() error { return db.TouchClient(ctx, "nope", at(1)) }},
		{"Setting", func() error { _, err := db.Setting(ctx, "nope"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, agent.ErrNotFound) {
				t.Errorf("%s = %v, want an error wrapping agent.ErrNotFound", tc.name, err)
			}
		})
	}
	// An existing conversation without turns is empty, not missing.
	if msgs, err := db.Messages(ctx, empty.ID); err != nil || len(msgs) != 0 {
		t.Errorf("Messages of an empty conversation = %v, %v; want none, nil", msgs, err)
	}
	if turns, err := db.Turns(ctx, empty.ID); err != nil || len(turns) != 0 {
		t.Errorf("Turns of an empty conversation = %v, %v; want none, nil", turns, err)
	}
}

func TestTurnLifecycle(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn, user := runningTurn(conv, "turn-1", at(100))

	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(100))

	turn.Status, turn.Model, turn.EndedAt = agent.TurnCompleted, "llama3.2:3b", at(2600)
	turn.PromptTokens, turn.OutputTokens, turn.ToolCalls = 120, 45, 1
	produced := []agent.Message{
		{Role: agent.RoleAssistant, TurnID: turn.ID, CreatedAt: at(900), ToolCalls: []agent.ToolCall{
			{ID: "call-1", Name: "read_file", Arguments: json.RawMessage(`{"path": "notes.txt"}`)},
			{ID: "call-2", Name: "clock"},
		}},
		{Role: agent.RoleTool, Content: "buy milk", ToolCallID: "call-1", ToolName: "read_file", TurnID: turn.ID, CreatedAt: at(1000)},
		// TurnID may be left blank: the message is the turn's anyway.
		{Role: agent.RoleAssistant, Content: "Buy milk.", CreatedAt: at(2500)},
	}
	if err := db.EndTurn(ctx, turn, produced); err != nil {
		t.Fatalf("EndTurn: %v", err)
	}
	produced[2].TurnID = turn.ID
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, append([]agent.Message{user}, produced...), at(2600))
	if got, want := turn.Duration(), 2500*time.Millisecond; got != want {
		t.Errorf("Duration = %v, want %v", got, want)
	}

	// A second turn follows the first in both lists.
	turn2, user2 := runningTurn(conv, "turn-2", at(5000))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn2, User: user2})(); err != nil {
		t.Fatalf("BeginTurn 2: %v", err)
	}
	turn2.Status, turn2.EndedAt, turn2.Error = agent.TurnFailed, at(5200), "the model is not installed"
	if err := db.EndTurn(ctx, turn2, nil); err != nil {
		t.Fatalf("EndTurn 2: %v", err)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn, turn2}, append([]agent.Message{user}, append(produced, user2)...), at(5200))
}

// checkConversation compares a conversation's turns, messages and UpdatedAt.
func checkConversation(t *testing.T, db *store.DB, id string, turns []agent.Turn, msgs []agent.Message, updated time.Time) {
	t.Helper()
	gotTurns, err := db.Turns(ctx, id)
	if err != nil {
		t.Fatalf("Turns: %v", err)
	}
	if diff := cmp.Diff(turns, gotTurns); diff != "" {
		t.Errorf("Turns (-want +got):\n%s", diff)
	}
	gotMsgs, err := db.Messages(ctx, id)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if diff := cmp.Diff(msgs, gotMsgs); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	conv, err := db.Conversation(ctx, id)
	if err != nil {
		t.Fatalf("Conversation: %v", err)
	}
	if !conv.UpdatedAt.Equal(updated) {
		t.Errorf("conversation UpdatedAt = %v, want %v", conv.UpdatedAt, updated)
	}
}

func TestTurnsInStartOrder(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	// Recorded in the order b, a, c; a started first; b and c at the same time.
	for _, tc := range []struct {
		id    string
		start time.Time
	}{{"b", at(200)}, {"a", at(100)}, {"c", at(200)}} {
		turn, user := runningTurn(conv, tc.id, tc.start)
		if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
			t.Fatal(err)
		}
	}
	turns, err := db.Turns(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, turn := range turns {
		ids = append(ids, turn.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("turn order (-want +got):\n%s", diff)
	}
	// Messages stay in the order they were recorded, whatever their times.
	msgs, err := db.Messages(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, m := range msgs {
		owners = append(owners, m.TurnID)
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, owners); diff != "" {
		t.Errorf("message order (-want +got):\n%s", diff)
	}
}

// TestTurnWritesAreAtomic: when one of BeginTurn's or EndTurn's writes
// fails, none of them is kept.
func TestTurnWritesAreAtomic(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")

	turn, user := runningTurn(conv, "t1", at(100))
	bad := user
	bad.Role = "narrator" // refused by the role CHECK
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: bad})(); err == nil {
		t.Fatal("BeginTurn with a bad message succeeded")
	}
	checkConversation(t, db, conv.ID, nil, nil, conv.UpdatedAt)

	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	ended := turn
	ended.Status, ended.EndedAt = agent.TurnCompleted, at(300)
	produced := []agent.Message{
		{Role: agent.RoleAssistant, Content: "fine", CreatedAt: at(200)},
		{Role: agent.RoleTool, Content: "x", TurnID: "another-turn", CreatedAt: at(250)}, // refused
	}
	if err := db.EndTurn(ctx, ended, produced); err == nil {
		t.Fatal("EndTurn with a message of another turn succeeded")
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(100))

	// Status checks: BeginTurn records running turns, EndTurn ends them.
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: agent.Turn{ID: "t2", ConversationID: conv.ID, Status: agent.TurnCompleted}, User: user})(); err == nil {
		t.Error("BeginTurn of a completed turn succeeded")
	}
	if err := db.EndTurn(ctx, turn, nil); err == nil {
		t.Error("EndTurn with status running succeeded")
	}
}

func TestToolCallArgumentsKeptIntact(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	for i, tc := range []struct {
		name string
		args json.RawMessage
	}{
		{"nil", nil},
		{"compact object", json.RawMessage(`{"a":1}`)},
		{"spaced object", json.RawMessage("{ \"path\" :\n\t\"a b.txt\" , \"n\": 1.50 }")},
		{"html and escapes", json.RawMessage(`{"q":"<b>&amp;</b>","e":"\u00e9\n"}`)},
		{"null", json.RawMessage(`null`)},
		{"array", json.RawMessage(`[1, 2]`)},
		{"surrounding space", json.RawMessage(" {\"a\": 1}\n")},
		{"invalid JSON", json.RawMessage(`{"path": "unterminated`)},
		{"not JSON at all", json.RawMessage(`path=notes.txt`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn, user := runningTurn(conv, fmt.Sprintf("turn-%d", i), at(i*1000))
			if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
				t.Fatal(err)
			}
			call := agent.ToolCall{ID: "call", Name: "tool", Arguments: tc.args}
			turn.Status, turn.EndedAt = agent.TurnCompleted, at(i*1000+10)
			msg := agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}, TurnID: turn.ID, CreatedAt: at(i*1000 + 5)}
			if err := db.EndTurn(ctx, turn, []agent.Message{msg}); err != nil {
				t.Fatalf("EndTurn: %v", err)
			}
			msgs, err := db.Messages(ctx, conv.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := msgs[len(msgs)-1].ToolCalls
			if len(got) != 1 || got[0].ID != call.ID || got[0].Name != call.Name {
				t.Fatalf("ToolCalls = %+v, want [%+v]", got, call)
			}
			if string(got[0].Arguments) != string(call.Arguments) || (call.Arguments == nil) != (got[0].Arguments == nil) {
				t.Errorf("Arguments = %q, want %q byte for byte", got[0].Arguments, call.Arguments)
			}
		})
	}
}

// TestTimesKeepMilliseconds documents the time encoding: Unix
// milliseconds, so a time reads back truncated to the millisecond (in
// UTC), and unset optional times stay zero.
func TestTimesKeepMilliseconds(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	fine := time.Date(2026, time.July, 4, 23, 59, 59, 123_456_789, time.FixedZone("PDT", -7*60*60))
	conv := agent.Conversation{ID: "conv", AgentID: a.ID, Principal: "p", CreatedAt: fine, UpdatedAt: fine}
	if err := db.CreateConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	got, err := db.Conversation(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := fine.Truncate(time.Millisecond)
	if !got.CreatedAt.Equal(want) || got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", got.CreatedAt, want)
	}

	client := agent.Client{ID: "c", Name: "n", TokenHash: []byte{1}, CreatedAt: fine}
	if err := db.PutClient(ctx, client); err != nil {
		t.Fatal(err)
	}
	clients, err := db.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := clients[0]; !c.LastUsedAt.IsZero() || !c.RevokedAt.IsZero() || !c.Active() {
		t.Errorf("unset times read back as LastUsedAt=%v RevokedAt=%v", c.LastUsedAt, c.RevokedAt)
	}
}

// TestInterruptAfterUncleanStop is the crash case as the store sees it: a
// turn begun and never ended is found running by the next process, marked
// interrupted, and its conversation goes on.
func TestInterruptAfterUncleanStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db := storetest.OpenAt(t, path)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn, user := runningTurn(conv, "cut-short", at(100))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	if err := db.Close(); err != nil { // no EndTurn
		t.Fatal(err)
	}

	db = storetest.OpenAt(t, path)
	checkInterrupted(t, db, conv, turn, user)
}

// checkInterrupted runs the start-up recovery on a store holding one
// running turn (turn, user) and checks that the conversation goes on.
func checkInterrupted(t *testing.T, db *store.DB, conv agent.Conversation, turn agent.Turn, user agent.Message) {
	t.Helper()
	n, err := db.InterruptRunningTurns(ctx, at(60_000))
	if err != nil || n != 1 {
		t.Fatalf("InterruptRunningTurns = %d, %v; want 1, nil", n, err)
	}
	if n, err := db.InterruptRunningTurns(ctx, at(61_000)); err != nil || n != 0 {
		t.Errorf("second InterruptRunningTurns = %d, %v; want 0, nil", n, err)
	}
	interrupted := turn
	interrupted.Status, interrupted.EndedAt = agent.TurnInterrupted, at(60_000)
	interrupted.Error = "Deskhand stopped while this turn was running"

	next, nextUser := runningTurn(conv, "after", at(70_000))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: next, User: nextUser})(); err != nil {
		t.Fatalf("BeginTurn after the crash: %v", err)
	}
	next.Status, next.EndedAt = agent.TurnCompleted, at(71_000)
	answer := agent.Message{Role: agent.RoleAssistant, Content: "here", TurnID: next.ID, CreatedAt: at(71_000)}
	if err := db.EndTurn(ctx, next, []agent.Message{answer}); err != nil {
		t.Fatalf("EndTurn after the crash: %v", err)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{interrupted, next}, []agent.Message{user, nextUser, answer}, at(71_000))
}

// TestConcurrentTurns runs turns in 8 conversations at once: writers wait
// for each other (busy timeout, BEGIN IMMEDIATE) instead of failing.
func TestConcurrentTurns(t *testing.T) {
	const workers, turnsEach = 8, 15
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	convs := make([]agent.Conversation, workers)
	for i := range convs {
		convs[i] = createConversation(t, db, a, fmt.Sprintf("conv-%d", i))
	}
	start := make(chan struct{})
	done := make(chan error, workers)
	for _, conv := range convs {
		go func() {
			<-start
			for j := range turnsEach {
				turn, user := runningTurn(conv, fmt.Sprintf("%s-turn-%d", conv.ID, j), at(1000*j))
				if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
					done <- fmt.Errorf("BeginTurn %s: %w", turn.ID, err)
					return
				}
				turn.Status, turn.EndedAt = agent.TurnCompleted, at(1000*j+500)
				reply := agent.Message{Role: agent.RoleAssistant, Content: "ok", CreatedAt: turn.EndedAt}
				if err := db.EndTurn(ctx, turn, []agent.Message{reply}); err != nil {
					done <- fmt.Errorf("EndTurn %s: %w", turn.ID, err)
					return
				}
			}
			done <- nil
		}()
	}
	close(start)
	for range workers {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	for _, conv := range convs {
		turns, err := db.Turns(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := db.Messages(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(turns) != turnsEach || len(msgs) != 2*turnsEach {
			t.Errorf("%s: %d turns and %d messages, want %d and %d", conv.ID, len(turns), len(msgs), turnsEach, 2*turnsEach)
		}
		for _, turn := range turns {
			if turn.Status != agent.TurnCompleted {
				t.Errorf("turn %s is %s, want completed", turn.ID, turn.Status)
			}
		}
	}
}

func TestRecentConversations(t *testing.T) {
	db := storetest.Open(t)
	ctx := t.Context()
	a := agent.Agent{ID: "a1", Slug: "helper", Name: "Helper", Backend: agent.BackendOllama, CreatedAt: time.UnixMilli(1000).UTC(), UpdatedAt: time.UnixMilli(1000).UTC()}
	if err := db.PutAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"c-old", "c-new"} {
		at := time.UnixMilli(int64(2000 + i*1000)).UTC()
		if err := db.CreateConversation(ctx, agent.Conversation{ID: id, AgentID: "a1", Principal: "p", Title: id, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	turn := agent.Turn{ID: "t1", ConversationID: "c-old", AgentID: "a1", Principal: "p", Status: agent.TurnRunning, StartedAt: time.UnixMilli(5000).UTC()}
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: agent.Message{Role: agent.RoleUser, Content: "hi", CreatedAt: turn.StartedAt}})(); err != nil {
		t.Fatal(err)
	}
	got, err := db.RecentConversations(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "c-old" || got[0].LastStatus != agent.TurnRunning || got[1].ID != "c-new" || got[1].LastStatus != "" {
		t.Errorf("recent = %+v", got)
	}
	if one, _ := db.RecentConversations(ctx, 1); len(one) != 1 {
		t.Errorf("limit ignored: %d", len(one))
	}
}

// TestDeleteAgent: an agent goes with its conversations, turns and
// messages; other agents' stay.
func TestDeleteAgent(t *testing.T) {
	db := storetest.Open(t)
	gone, kept := putAgent(t, db, "gone"), putAgent(t, db, "kept")
	for _, c := range []agent.Conversation{createConversation(t, db, gone, "c-gone"), createConversation(t, db, kept, "c-kept")} {
		turn, user := runningTurn(c, "t-"+c.ID, at(2))
		if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteAgent(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Conversation(ctx, "c-gone"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("the deleted agent's conversation: %v", err)
	}
	if msgs, err := db.Messages(ctx, "c-gone"); !errors.Is(err, agent.ErrNotFound) || len(msgs) != 0 {
		t.Errorf("the deleted agent's messages: %v, %v", msgs, err)
	}
	if msgs, err := db.Messages(ctx, "c-kept"); err != nil || len(msgs) != 1 {
		t.Errorf("another agent's messages: %v, %v", msgs, err)
	}
	agents, _ := db.Agents(ctx)
	if len(agents) != 1 || agents[0].Slug != "kept" {
		t.Errorf("agents = %+v", agents)
	}
	if err := db.DeleteAgent(ctx, gone.ID); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

// TestConversationsOfPages: a principal's conversations, last active
// first, in pages that resume after the last one listed (ties on the
// time broken by id), and no one else's.
func TestConversationsOfPages(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	for i, c := range []agent.Conversation{
		{ID: "c1", UpdatedAt: at(10)}, {ID: "c2", UpdatedAt: at(30)}, {ID: "c3", UpdatedAt: at(30)}, {ID: "c4", UpdatedAt: at(20)},
		{ID: "other", UpdatedAt: at(40), Principal: "someone-else"},
	} {
		c.AgentID, c.CreatedAt = a.ID, at(i)
		if c.Principal == "" {
			c.Principal = "me"
		}
		if err := db.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	var after agent.PageMark
	for page := 0; page < 5; page++ {
		list, err := db.ConversationsOf(ctx, "me", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			got = append(got, c.ID)
		}
		if len(list) < 3 {
			break
		}
		last := list[len(list)-1]
		after = agent.PageMark{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
	if want := []string{"c3", "c2", "c4", "c1"}; !cmp.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
}

func TestLastMessagesAndCount(t *testing.T) {
	db := storetest.Open(t)
	c := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	for i := range 5 {
		turn, user := runningTurn(c, fmt.Sprintf("t%d", i), at(10*i))
		user.Content = fmt.Sprint("q", i)
		if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
			t.Fatal(err)
		}
	}
	last, err := db.LastMessages(ctx, "conv", 2)
	if err != nil || len(last) != 2 || last[0].Content != "q3" || last[1].Content != "q4" {
		t.Errorf("last 2 = %+v, %v", last, err)
	}
	if n, err := db.CountMessages(ctx); err != nil || n != 5 {
		t.Errorf("count = %d, %v", n, err)
	}
	if _, err := db.LastMessages(ctx, "nope", 2); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("unknown conversation: %v", err)
	}
}

// TestConcurrentWrites: writes from many callers at once are committed in
// groups; each caller learns its own outcome, a failing write leaves the
// others of its group stored, and Close stops the writer.
func TestConcurrentWrites(t *testing.T) {
	db := storetest.Open(t)
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range errs {
		wg.Go(func() {
			// Every tenth client reuses the name of the one before it,
			// which the active-name index refuses.
			name := fmt.Sprint("client-", i-i%10/9)
			errs[i] = db.PutClient(ctx, agent.Client{ID: fmt.Sprint("id-", i), Name: name, TokenHash: []byte{byte(i)}, CreatedAt: at(i)})
		})
	}
	wg.Wait()
	stored, err := db.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, err := range errs {
		if err != nil {
			refused++
		}
	}
	if refused != 10 || len(stored) != 90 {
		t.Errorf("%d writes refused, %d clients stored; want 10 and 90", refused, len(stored))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PutClient(ctx, agent.Client{ID: "late", Name: "late", TokenHash: []byte{1}, CreatedAt: at(0)}); err == nil {
		t.Error("a write after Close succeeded")
	}
}

// TestTurnStartsConversation: a turn that starts its conversation writes
// it with the turn, dated by its latest write; a refused conversation
// leaves nothing, and the turn's end then finds no turn.
func TestTurnStartsConversation(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	conv := agent.Conversation{ID: "conv-new", AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(10), UpdatedAt: at(10)}
	turn, user := runningTurn(conv, "turn-1", at(12))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user, NewConversation: &conv})(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	got, err := db.Conversation(ctx, conv.ID)
	if want := (agent.Conversation{ID: conv.ID, AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(10), UpdatedAt: at(12)}); err != nil || !cmp.Equal(got, want) {
		t.Errorf("Conversation = %+v, %v; want %+v", got, err, want)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(12))

	orphan := agent.Conversation{ID: "orphan", AgentID: "no-such-agent", Principal: "p", CreatedAt: at(20), UpdatedAt: at(20)}
	turn2, user2 := runningTurn(orphan, "turn-2", at(20))
	begun := db.BeginTurn(ctx, agent.TurnStart{Turn: turn2, User: user2, NewConversation: &orphan})
	turn2.Status, turn2.EndedAt = agent.TurnCompleted, at(21)
	endErr := db.EndTurn(ctx, turn2, nil)
	if err := begun(); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("BeginTurn with an unknown agent = %v, want agent.ErrNotFound", err)
	}
	if !errors.Is(endErr, agent.ErrNotFound) {
		t.Errorf("EndTurn of a refused turn = %v, want agent.ErrNotFound", endErr)
	}
	if _, err := db.Conversation(ctx, orphan.ID); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("the refused conversation was stored (Conversation = %v)", err)
	}
}

// TestQueuedTurnOutlivesItsCaller: a turn's start, once queued, is written
// even when its caller gives up at once: the end queued after it counts
// on it.
func TestQueuedTurnOutlivesItsCaller(t *testing.T) {
	db := storetest.Open(t)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn, user := runningTurn(conv, "turn-1", at(100))
	callerCtx, cancel := context.WithCancel(ctx)
	begun := db.BeginTurn(callerCtx, agent.TurnStart{Turn: turn, User: user})
	cancel()
	turn.Status, turn.EndedAt = agent.TurnCancelled, at(150)
	if err := db.EndTurn(ctx, turn, nil); err != nil {
		t.Fatalf("EndTurn: %v", err)
	}
	if err := begun(); err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(150))
}

// TestEndTurnChecksItsConversation: a turn is ended only in its own
// conversation, so its messages cannot land in another.
func TestEndTurnChecksItsConversation(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	conv, other := createConversation(t, db, a, "conv"), createConversation(t, db, a, "other")
	turn, user := runningTurn(conv, "turn-1", at(100))
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatal(err)
	}
	stray := turn
	stray.ConversationID, stray.Status, stray.EndedAt = other.ID, agent.TurnCompleted, at(200)
	if err := db.EndTurn(ctx, stray, []agent.Message{{Role: agent.RoleAssistant, Content: "lost", CreatedAt: at(200)}}); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("EndTurn in another conversation = %v, want agent.ErrNotFound", err)
	}
	if msgs, err := db.Messages(ctx, other.ID); err != nil || len(msgs) != 0 {
		t.Errorf("messages of the other conversation: %+v, %v; want none", msgs, err)
	}
}

// TestCloseCommitsQueuedTurns: a turn's start queued when the store
// closes is committed before Close returns, not dropped or left waiting.
func TestCloseCommitsQueuedTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db := storetest.OpenAt(t, path)
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn, user := runningTurn(conv, "turn-1", at(100))
	begun := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := begun(); err != nil {
		t.Fatalf("the queued turn: %v", err)
	}
	db = storetest.OpenAt(t, path)
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(100))
}

// TestListsSeeQueuedTurns: a turn's start still queued (its model at
// work) shows in the lists at once, its new conversation included.
func TestListsSeeQueuedTurns(t *testing.T) {
	db := storetest.Open(t)
	a := putAgent(t, db, "helper")
	conv := agent.Conversation{ID: "conv-new", AgentID: a.ID, Principal: "client-1", Title: "hello", CreatedAt: at(10), UpdatedAt: at(10)}
	turn, user := runningTurn(conv, "turn-1", at(12))
	begun := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user, NewConversation: &conv})
	recent, err := db.RecentConversations(ctx, 10)
	if err != nil || len(recent) != 1 || recent[0].ID != conv.ID || recent[0].LastStatus != agent.TurnRunning {
		t.Errorf("RecentConversations = %+v, %v; want the running conversation", recent, err)
	}
	mine, err := db.ConversationsOf(ctx, "client-1", agent.PageMark{}, 10)
	if err != nil || len(mine) != 1 {
		t.Errorf("ConversationsOf = %+v, %v", mine, err)
	}
	checkConversation(t, db, conv.ID, []agent.Turn{turn}, []agent.Message{user}, at(12))
	if err := begun(); err != nil {
		t.Fatal(err)
	}
}
