package store

import (
	"context"
	"strings"
	"testing"
)

// queryPlan is EXPLAIN QUERY PLAN's details of query, one per line.
func queryPlan(t *testing.T, db *DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestRecentConversationsPlan: the list of recent conversations reads
// its page off the recent index (migration 0013) newest first, without
// sorting every conversation stored, and looks each status up by index
// for the page's rows only.
func TestRecentConversationsPlan(t *testing.T) {
	query := summaryColumns + "WHERE c.parent_turn_id IS NULL" + summaryPage
	plan := queryPlan(t, openTest(t), query, 200)
	for _, w := range []string{"SEARCH c USING INTEGER PRIMARY KEY", "SEARCH t USING INDEX turns_conversation_started", "SCAN c USING INDEX conversations_recent"} {
		if !strings.Contains(plan, w) {
			t.Errorf("the plan lacks %q:\n%s", w, plan)
		}
	}
	if strings.Contains(plan, "SCAN c\n") || strings.HasSuffix(plan, "SCAN c") {
		t.Errorf("the plan reads every conversation:\n%s", plan)
	}
}
