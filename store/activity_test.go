package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
	"github.com/google/go-cmp/cmp"
)

func activityRow(ms int, client, agentSlug string) agent.ActivityRow {
	return agent.ActivityRow{Time: at(ms), Client: client, Era: "2025-11-25", Method: "tools/call", Agent: agentSlug,
		Conversation: "c-" + agentSlug, Duration: 1500 * time.Microsecond, Outcome: agent.OutcomeOK, BytesIn: 10, BytesOut: 20}
}

func activity(t *testing.T, db *store.DB, f agent.ActivityFilter) []agent.ActivityRow {
	t.Helper()
	rows, err := db.Activity(ctx, f)
	if err != nil {
		t.Fatalf("Activity(%+v): %v", f, err)
	}
	return rows
}

// ids lists the rows' IDs, clearing them, so rows compare with what was
// recorded.
func ids(rows []agent.ActivityRow) []int64 {
	var out []int64
	for i := range rows {
		out = append(out, rows[i].ID)
		rows[i].ID = 0
	}
	return out
}

func TestActivityRoundTripAndFilters(t *testing.T) {
	db := storetest.Open(t)
	a := activityRow(100, "cursor", "researcher")
	b := activityRow(200, "claude", "writer")
	b.Outcome, b.Reason, b.Text = agent.OutcomeToolError, "", "the model failed"
	c := activityRow(300, "cursor", "writer")
	c.Arguments = `{"message":"hello"}`
	for i, r := range []agent.ActivityRow{a, b, c} {
		if id, ok := db.RecordActivity(r); !ok || id != int64(i+1) {
			t.Fatalf("RecordActivity = %d, %v; want ID %d", id, ok, i+1)
		}
	}
	for _, tc := range []struct {
		name string
		f    agent.ActivityFilter
		want []agent.ActivityRow
	}{
		{"all, newest first", agent.ActivityFilter{}, []agent.ActivityRow{c, b, a}},
		{"client", agent.ActivityFilter{Client: "cursor"}, []agent.ActivityRow{c, a}},
		{"agent", agent.ActivityFilter{Agent: "writer"}, []agent.ActivityRow{c, b}},
		{"since", agent.ActivityFilter{Since: at(200)}, []agent.ActivityRow{c, b}},
		{"limit", agent.ActivityFilter{Limit: 1}, []agent.ActivityRow{c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := activity(t, db, tc.f)
			ids(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Recorded rows are never written on the recorder's goroutine; a lone
// write does not carry a few of them (its caller would wait on them), but
// enough waiting rows ride any commit.
func TestActivityRidesACommitOnlyUnderLoad(t *testing.T) {
	db := storetest.Open(t)
	db.SetActivityRide(3)
	db.RecordActivity(activityRow(100, "cursor", "researcher"))
	if !db.ActivityPending() {
		t.Fatal("the row was written at once, on the recorder's goroutine")
	}
	if err := db.SetSetting(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if !db.ActivityPending() {
		t.Error("a lone write carried one row")
	}
	db.RecordActivity(activityRow(200, "cursor", "researcher"))
	db.RecordActivity(activityRow(300, "cursor", "researcher"))
	if err := db.SetSetting(ctx, "k", "w"); err != nil {
		t.Fatal(err)
	}
	if db.ActivityPending() {
		t.Error("three waiting rows did not ride the setting's commit")
	}
}

// Rows still buffered when the database closes are written.
func TestActivityWrittenAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	db := storetest.OpenAt(t, path)
	db.RecordActivity(activityRow(100, "cursor", "researcher"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = storetest.OpenAt(t, path)
	if got := activity(t, db, agent.ActivityFilter{}); len(got) != 1 {
		t.Errorf("after reopening: %d rows, want 1", len(got))
	}
	// IDs go on from the last one written: a follower's "after" holds.
	if id, _ := db.RecordActivity(activityRow(200, "cursor", "researcher")); id != 2 {
		t.Errorf("the first row after reopening got ID %d, want 2", id)
	}
}

func TestClientCalls(t *testing.T) {
	db := storetest.Open(t)
	list := activityRow(150, "cursor", "")
	list.Method = "tools/list"
	refused := activityRow(300, "", "")
	refused.Outcome = agent.OutcomeRefused
	for _, r := range []agent.ActivityRow{activityRow(100, "cursor", "a"), list, activityRow(200, "cursor", "a"),
		activityRow(250, "claude", "b"), refused, activityRow(50, "claude", "b")} {
		db.RecordActivity(r)
	}
	got, err := db.ClientCalls(ctx, at(100))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"cursor": 2, "claude": 1}, got); diff != "" {
		t.Errorf("calls since 100 ms (-want +got):\n%s", diff)
	}
}

func TestActivityFullBufferCountsDrops(t *testing.T) {
	db := storetest.Open(t)
	db.SetActivityBuffer(2)
	var kept int
	for i := range 5 {
		if _, ok := db.RecordActivity(activityRow(100+i, "cursor", "researcher")); ok {
			kept++
		}
	}
	if kept != 2 {
		t.Fatalf("kept %d rows, want 2", kept)
	}
	got := activity(t, db, agent.ActivityFilter{})
	if len(got) != 3 || got[0].Outcome != agent.OutcomeDropped || got[0].Text != "3 rows were dropped: the log could not keep up" {
		t.Errorf("rows = %+v, want the 2 kept and one counting 3 dropped", got)
	}
}

func TestPruneActivity(t *testing.T) {
	for _, tc := range []struct {
		name     string
		before   time.Time
		maxBytes int64
		want     []int64 // times left, newest first
	}{
		{"by age", at(250), 0, []int64{400, 300}},
		{"by size", at(0), 2 * rowBytes, []int64{400, 300}},
		{"by size, a bound under one row", at(0), 1, nil},
		{"by age and size", at(350), 10 * rowBytes, []int64{400}},
		{"nothing to prune", at(0), 10 * rowBytes, []int64{400, 300, 200, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			for _, ms := range []int{100, 200, 300, 400} {
				db.RecordActivity(activityRow(ms, "cursor", "researcher"))
			}
			if _, err := db.PruneActivity(ctx, tc.before, tc.maxBytes); err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range activity(t, db, agent.ActivityFilter{}) {
				got = append(got, r.Time.Sub(t0).Milliseconds())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
		})
	}
}

// rowBytes is the size an activityRow counts for.
const rowBytes = int64(96 + len("cursor") + len("2025-11-25") + len("tools/call") + 2*len("researcher") + len("c-") + len("ok"))

// Rows are written in chunks and one at a time: every row of a burst that
// is not a multiple of the chunk arrives, in order.
func TestActivityBurst(t *testing.T) {
	db := storetest.Open(t)
	const n = 2*32 + 5
	for i := range n {
		if _, ok := db.RecordActivity(activityRow(i, "cursor", "researcher")); !ok {
			t.Fatal("dropped")
		}
	}
	got := activity(t, db, agent.ActivityFilter{})
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	for i, r := range got {
		if want := int64(n - i); r.ID != want || !r.Time.Equal(at(int(want-1))) {
			t.Errorf("row %d: ID %d at %v, want ID %d at %v", i, r.ID, r.Time, want, at(int(want-1)))
		}
	}
}
