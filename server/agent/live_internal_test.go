package agent

import (
	"testing"
	"time"
)

// TestLiveProgress: rounds, tool results and pieces of text add up; a
// round's end starts its text afresh; once recorded, nothing is live.
func TestLiveProgress(t *testing.T) {
	var p liveProgress
	if _, ok := p.snapshot(); ok {
		t.Error("live before the turn began")
	}
	p.begin("t1", "helper", time.Unix(1, 0))
	p.delta("Let ")
	p.delta("me look.")
	s, ok := p.snapshot()
	if !ok || s.Writing != "Let me look." || s.Chunks != 2 || len(s.Messages) != 0 {
		t.Errorf("first round: %+v %v", s, ok)
	}
	p.roundDone(Message{Role: RoleAssistant, Content: "Let me look.", ToolCalls: []ToolCall{{ID: "1", Name: "read_file"}}}, 10, 3)
	p.toolDone(Message{Role: RoleTool, ToolCallID: "1", Content: "found"})
	p.delta("Done")
	s, _ = p.snapshot()
	if s.Writing != "Done" || s.Chunks != 1 || len(s.Messages) != 2 || s.PromptTokens != 10 || s.OutputTokens != 3 {
		t.Errorf("second round: %+v", s)
	}
	p.end()
	if _, ok := p.snapshot(); ok {
		t.Error("live once recorded")
	}
}

// BenchmarkLiveDelta is what LiveTurn adds to each streamed piece: a lock
// and an append (the builder grows by doubling, so allocations are rare).
func BenchmarkLiveDelta(b *testing.B) {
	var p liveProgress
	p.begin("t1", "helper", time.Unix(1, 0))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 { // a round of 1,000 tokens
			p.roundDone(Message{Role: RoleAssistant}, 1, 1000)
		}
		p.delta("token ")
	}
}
