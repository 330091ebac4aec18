package mcpfill

import (
	"testing"
	"time"
)

// TestFinishedTasksExpire: a finished task, and the note of one dropped
// to stay within the limits, are kept the TTL and no longer.
func TestFinishedTasksExpire(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tt := NewTasks(NewQuota(4, 4), time.Hour, func() time.Time { return now }, NewShelf(4, 1))
	finish := func(id string) {
		task := &Task{id: id, principal: "p"}
		tt.add(task)
		tt.finish(task)
	}
	finish("old")
	now = now.Add(30 * time.Minute)
	finish("new") // over the share of 1: "old" is dropped
	if got, hit := tt.get("old", "p"); got != nil || hit != ClientLimit {
		t.Fatalf("the dropped task: %v, hit %v", got, hit)
	}
	now = now.Add(31 * time.Minute) // "old" would have expired by now
	tt.add(&Task{id: "running", principal: "p"})
	if got, hit := tt.get("old", "p"); got != nil || hit != WithinLimits {
		t.Errorf("the note of a dropped task outlived the TTL: hit %v", hit)
	}
	if got, _ := tt.get("new", "p"); got == nil {
		t.Error("a finished task went before the TTL")
	}
	now = now.Add(30 * time.Minute)
	tt.add(&Task{id: "later", principal: "p"})
	if got, _ := tt.get("new", "p"); got != nil {
		t.Error("a finished task outlived the TTL")
	}
	if got, _ := tt.get("running", "p"); got == nil {
		t.Error("an unfinished task expired")
	}
	if len(tt.tasks) != 2 || tt.finished.Len() != 0 || tt.notes.Len() != 0 || len(tt.dropped) != 0 {
		t.Errorf("left: %d tasks, %d finished, %d notes, %d dropped", len(tt.tasks), tt.finished.Len(), tt.notes.Len(), len(tt.dropped))
	}
}
