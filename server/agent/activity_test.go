package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// A question is two rows: asked (its prompt) and closed (how, by whom);
// the answer is kept only for an agent that logs arguments.
func TestQuestionsInTheActivityLog(t *testing.T) {
	for _, logArguments := range []bool{false, true} {
		t.Run(map[bool]string{false: "answers not kept", true: "answers kept"}[logArguments], func(t *testing.T) {
			f := newFixture(t, agent.Config{Desktop: true}, agent.Agent{Slug: "helper", Model: "m", Conversations: true,
				Enabled: true, LogArguments: logArguments})
			f.model.Reply = askingModel("Which colour?", "red", "blue")
			events := f.core.Events().Subscribe(t.Context())
			done := f.runAsync(t, t.Context(), "paint it")
			id := nextQuestion(t, events)
			if err := f.core.Questions().Answer(id, map[string]any{"answer": "blue"}, false); err != nil {
				t.Fatal(err)
			}
			if out := <-done; out.err != nil {
				t.Fatal(out.err)
			}
			rows, err := f.core.Activity().List(t.Context(), agent.ActivityFilter{Agent: "helper"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 {
				t.Fatalf("rows = %+v, want asked and closed", rows)
			}
			closed, asked := rows[0], rows[1]
			if asked.Method != agent.ActivityQuestion || asked.Reason != "asked" || !strings.Contains(asked.Text, "Which colour?") ||
				asked.Client != "p" || asked.Conversation == "" {
				t.Errorf("asked = %+v", asked)
			}
			if closed.Method != agent.ActivityQuestion || closed.Reason != "answered by desktop" || closed.Conversation != asked.Conversation {
				t.Errorf("closed = %+v", closed)
			}
			if want := map[bool]string{false: "", true: "blue"}[logArguments]; closed.Arguments != want {
				t.Errorf("kept answer %q, want %q", closed.Arguments, want)
			}
		})
	}
}

// The sweeper prunes by age at start (the settings' bound), by the
// injected clock.
func TestActivityRetentionByAge(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, agent.Config{Now: func() time.Time { return now }}, agent.Agent{})
	if err := f.core.Settings().Set(t.Context(), agent.SettingLogMaxAge, "2d"); err != nil {
		t.Fatal(err)
	}
	f.core.Activity().Record(agent.ActivityRow{Time: now.Add(-72 * time.Hour), Method: "tools/call", Outcome: agent.OutcomeOK})
	f.core.Activity().Record(agent.ActivityRow{Time: now.Add(-24 * time.Hour), Method: "tools/list", Outcome: agent.OutcomeOK})
	if err := f.core.Activity().Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := f.core.Activity().List(t.Context(), agent.ActivityFilter{})
	if err != nil || len(rows) != 1 || rows[0].Method != "tools/list" {
		t.Errorf("after the sweep: %+v, %v; want the day-old row only", rows, err)
	}
}

// TestActivityRowsAreRedactedThenBounded: the log keeps a row's text and
// arguments bounded, with every secret the core holds taken out first, so
// that no cut leaves part of one behind.
func TestActivityRowsAreRedactedThenBounded(t *testing.T) {
	const secret = "plain-secret-value-3f81c2a9"
	redactor := agent.NewRedactor()
	redactor.Learn(secret)
	f := newFixture(t, agent.Config{Redactor: redactor}, agent.Agent{})
	straddling := strings.Repeat("x", 290) + secret // the cut at 300 falls inside the secret
	f.core.Activity().Record(agent.ActivityRow{Method: "tools/call", Outcome: agent.OutcomeToolError, Text: straddling,
		Arguments: strings.Repeat("y", 4090) + secret})
	rows, err := f.core.Activity().List(t.Context(), agent.ActivityFilter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	for what, kept := range map[string]string{"text": rows[0].Text, "arguments": rows[0].Arguments} {
		if strings.Contains(kept, secret[:6]) {
			t.Errorf("the %s keeps part of the secret: …%s", what, kept[len(kept)-20:])
		}
	}
	if want := strings.Repeat("x", 290) + "[redacted]"; rows[0].Text != want {
		t.Errorf("text = …%q, want …%q", rows[0].Text[280:], want[280:])
	}
	if len(rows[0].Arguments) > 4<<10+len("…") {
		t.Errorf("arguments of %d bytes, want at most 4 KiB", len(rows[0].Arguments))
	}
}
