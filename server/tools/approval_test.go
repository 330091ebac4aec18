package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestApprovalShowsWhatRuns: a person approves the decoded arguments that
// will run, never the model's JSON. Keys that differ only in case, keys
// given twice and unknown keys are refused before anyone is asked: Go's
// decoding would otherwise let "PATH" fill "path" after the person read
// "notes.txt".
func TestApprovalShowsWhatRuns(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		// asked is the approval's arguments; "" when the call is refused first.
		asked   string
		refusal string
	}{
		{"case variant", `{"path":"notes.txt","content":"harmless","PATH":"plan.txt"}`, "", `unknown argument "PATH" (names are case-sensitive); it accepts "path", "content"`},
		{"only a case variant", `{"Path":"plan.txt","content":"harmless"}`, "", `unknown argument "Path"`},
		{"key twice", `{"path":"notes.txt","content":"harmless","path":"plan.txt"}`, "", `argument "path" is given twice`},
		{"unknown key", `{"path":"notes.txt","content":"harmless","mode":"append"}`, "", `unknown argument "mode"`},
		{"content missing", `{"path":"notes.txt"}`, "", `argument "content" is required`},
		{"spacing and order", `{ "content" : "hi",  "path":"notes.txt" }`, `{"path":"notes.txt","content":"hi"}`, ""},
		{"escapes", `{"path":"not\u0065s.txt","content":"a\u0000b"}`, `{"path":"notes.txt","content":"a\u0000b"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folder := t.TempDir()
			model := &agenttest.Model{Reply: func(_ context.Context, n int, req agent.ChatRequest, _ func(agent.Delta)) (agent.ChatResponse, error) {
				if n == 1 {
					return agenttest.Calls("w1", tools.NameWriteFile, json.RawMessage(tc.args)), nil
				}
				return agenttest.Text(req.Messages[len(req.Messages)-1].Content), nil
			}}
			db := storetest.Open(t)
			core, err := agent.New(t.Context(), agent.Config{History: db, Desktop: true,
				Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}, Tools: tools.Catalog(tools.Options{})})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: "m", Enabled: true, Folders: []string{folder},
				Tools: []agent.AgentTool{{Name: tools.NameWriteFile, NeedsApproval: true}}}); err != nil {
				t.Fatal(err)
			}
			events := core.Events().Subscribe(t.Context(), agent.EventQuestionAsked, agent.EventTurnEnded)
			go func() {
				for e := range events {
					if e.Kind == agent.EventTurnEnded {
						return
					}
					_ = core.Questions().Answer(e.Question, map[string]any{"approve": true}, false)
				}
			}()
			res, err := core.Conversations().Run(t.Context(), agent.RunRequest{Agent: "scribe", Principal: "p", Message: "write"})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"notes.txt", "plan.txt"} {
				data, err := os.ReadFile(filepath.Join(folder, name))
				if written := err == nil; written != (tc.asked != "" && name == "notes.txt") {
					t.Errorf("%s written = %v (%q)", name, written, data)
				}
			}
			if tc.asked == "" {
				if !strings.HasPrefix(res.Text, "error: ") || !strings.Contains(res.Text, tc.refusal) {
					t.Errorf("the model read %q, want an error containing %q", res.Text, tc.refusal)
				}
				return
			}
			if !strings.HasPrefix(res.Text, "Created") {
				t.Errorf("the model read %q", res.Text)
			}
			qs, err := db.Questions(t.Context(), res.Conversation.ID)
			if err != nil || len(qs) != 1 {
				t.Fatalf("questions = %v, %v; want the one approval", qs, err)
			}
			if got := string(qs[0].Arguments); got != tc.asked {
				t.Errorf("the approval showed %s, want %s", got, tc.asked)
			}
			if p := qs[0].Prompt(); !strings.Contains(p, tc.asked) {
				t.Errorf("the approval's text %q does not show %s", p, tc.asked)
			}
		})
	}
}
