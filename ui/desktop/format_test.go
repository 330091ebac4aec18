package desktop

import (
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

func TestTurnSummary(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	done := agent.Turn{Status: agent.TurnCompleted, Model: "qwen3", StartedAt: at, EndedAt: at.Add(2 * time.Second), PromptTokens: 9000, OutputTokens: 12}
	for _, tc := range []struct {
		trimmed int
		want    string
	}{
		{0, "— completed in 2s on qwen3, 9000→12 tokens"},
		{1, "— completed in 2s on qwen3, 9000→12 tokens; trimmed: the model did not see the 1 oldest message of the conversation (its context window is full)"},
		{4, "— completed in 2s on qwen3, 9000→12 tokens; trimmed: the model did not see the 4 oldest messages of the conversation (its context window is full)"},
	} {
		turn := done
		turn.Trimmed = tc.trimmed
		if got := turnSummary(turn); got != tc.want {
			t.Errorf("trimmed %d: %q, want %q", tc.trimmed, got, tc.want)
		}
	}
}
