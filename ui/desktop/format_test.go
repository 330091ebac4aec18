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
		{0, "Done in 2s on qwen3 · read 9000 tokens, wrote 12"},
		{1, "Done in 2s on qwen3 · read 9000 tokens, wrote 12 · the model did not see the 1 oldest message of the conversation (its context window is full)"},
		{4, "Done in 2s on qwen3 · read 9000 tokens, wrote 12 · the model did not see the 4 oldest messages of the conversation (its context window is full)"},
	} {
		turn := done
		turn.Trimmed = tc.trimmed
		if got := turnSummary(turn); got != tc.want {
			t.Errorf("trimmed %d: %q, want %q", tc.trimmed, got, tc.want)
		}
	}
	// Plurals, no cost before any is known, failures say why.
	for _, tc := range []struct {
		turn agent.Turn
		want string
	}{
		{agent.Turn{Status: agent.TurnRunning}, "Running"},
		{agent.Turn{Status: agent.TurnCompleted, PromptTokens: 1, OutputTokens: 1, ToolCalls: 1}, "Done · read 1 token, wrote 1 · 1 tool call"},
		{agent.Turn{Status: agent.TurnCompleted, ToolCalls: 3}, "Done · 3 tool calls"},
		{agent.Turn{Status: agent.TurnFailed, Error: "the model is not installed"}, "Failed: the model is not installed"},
		{agent.Turn{Status: agent.TurnCancelled, Error: "the turn was stopped from the Deskhand desktop"}, "Stopped: the turn was stopped from the Deskhand desktop"},
	} {
		if got := turnSummary(tc.turn); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.turn, got, tc.want)
		}
	}
}
