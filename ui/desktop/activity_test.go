package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

var logNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

var logRows = []agent.ActivityRow{
	{ID: 3, Time: time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC), Client: "id-c", ClientName: "cursor", Method: "tools/call", Agent: "researcher", Conversation: "conv-1",
		Outcome: agent.OutcomeToolError, Text: "the model is\nnot installed", Duration: 1500 * time.Millisecond},
	{ID: 2, Time: time.Date(2026, 11, 30, 10, 0, 2, 0, time.UTC), Method: "POST", Outcome: agent.OutcomeRefused, Reason: "bad token"},
	{ID: 1, Time: time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC), Client: "id-d", ClientName: "claude", Method: "tools/list", Outcome: agent.OutcomeOK, Duration: 300 * time.Microsecond},
}

var logNames = map[string]string{"id-c": "cursor", "id-d": "claude"}

func TestFilterActivity(t *testing.T) {
	for _, tc := range []struct {
		name, query, outcome string
		housekeeping         bool // hide the protocol's own requests that went well
		want                 []int
	}{
		{"everything", "", allOutcomes, false, []int{0, 1, 2}},
		{"by client name", "CURSOR", allOutcomes, false, []int{0}},
		{"not by client ID", "id-c", allOutcomes, false, nil},
		{"by agent", "research", "", false, []int{0}},
		{"by method", "tools/", allOutcomes, false, []int{0, 2}},
		{"by text, across its line break", "is not installed", allOutcomes, false, []int{0}},
		{"by text, whatever the case", "NOT INSTALLED", allOutcomes, false, []int{0}},
		{"by reason", "bad token", allOutcomes, false, []int{1}},
		{"by outcome", "", string(agent.OutcomeRefused), false, []int{1}},
		{"outcome and text that do not meet", "cursor", string(agent.OutcomeOK), false, nil},
		{"not the time", "10:00", allOutcomes, false, nil},
		{"spaces around", "  claude ", allOutcomes, false, []int{2}},
		{"calls and failures, not the lists", "", allOutcomes, true, []int{0, 1}},
		{"a list asked for by name is still hidden", "claude", allOutcomes, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []agent.ActivityRow
			for _, i := range tc.want {
				want = append(want, logRows[i])
			}
			if diff := cmp.Diff(want, filterActivity(logRows, logNames, activityFilter{query: tc.query, outcome: tc.outcome, every: !tc.housekeeping})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestActivityCells(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  agent.ActivityRow
		want []string
	}{
		{"a tool error today", logRows[0], []string{"10:00:03", "cursor", "researcher", "tool error", "tools/call: the model is not installed · 1.5s"}},
		{"refused before a client was known, yesterday", logRows[1], []string{"Nov 30 10:00", "—", "", "refused (bad token)", "POST"}},
		{"quick", logRows[2], []string{"10:00:01", "claude", "", "ok", "tools/list · under 1 ms"}},
		{"a revoked client", agent.ActivityRow{Time: logNow, Client: "gone", Method: "ping", Outcome: agent.OutcomeOK, Duration: 42 * time.Millisecond},
			[]string{"12:00:00", "a revoked client", "", "ok", "ping · 42 ms"}},
		{"over stdio", agent.ActivityRow{Time: logNow, Client: agent.LocalPrincipal, Method: agent.ActivityQuestion, Outcome: agent.OutcomeOK, Reason: "answered by desktop"},
			[]string{"12:00:00", "this computer", "", "ok (answered by desktop)", "question"}},
	} {
		if got := activityCells(tc.row, logNames, logNow); !slices.Equal(got, tc.want) {
			t.Errorf("%s: cells %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMergeActivity(t *testing.T) {
	row := func(id int64) agent.ActivityRow { return agent.ActivityRow{ID: id, Method: fmt.Sprint(id)} }
	ids := func(rows []agent.ActivityRow) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	many := make([]agent.ActivityRow, activityKept)
	for i := range many {
		many[i] = row(int64(activityKept - i))
	}
	for _, tc := range []struct {
		name         string
		newer, older []agent.ActivityRow
		want         []int64
	}{
		{"nothing", nil, nil, nil},
		{"new rows on top", []agent.ActivityRow{row(5), row(4)}, []agent.ActivityRow{row(3), row(1)}, []int64{5, 4, 3, 1}},
		{"rows also in the page are dropped", []agent.ActivityRow{row(4), row(3)}, []agent.ActivityRow{row(4), row(3), row(2)}, []int64{4, 3, 2}},
		{"rows that came before the page was read", []agent.ActivityRow{row(6), row(4)}, []agent.ActivityRow{row(5), row(4), row(3)}, []int64{6, 5, 4, 3}},
		{"rows without an ID keep their order", []agent.ActivityRow{{Method: "b"}, {Method: "a"}}, []agent.ActivityRow{{Method: "z"}}, []int64{0, 0, 0}},
		{"at most activityKept", []agent.ActivityRow{row(activityKept + 1)}, many, append([]int64{activityKept + 1}, ids(many[:activityKept-1])...)},
	} {
		got := mergeActivity(tc.newer, tc.older)
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: IDs %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	noID := mergeActivity([]agent.ActivityRow{{Method: "b"}, {Method: "a"}}, []agent.ActivityRow{{Method: "z"}})
	if noID[0].Method != "b" || noID[2].Method != "z" {
		t.Errorf("rows without an ID: %+v", noID)
	}
}

func TestActivityTexts(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{activityNote(0, 0, false, false), "Reading the log…"},
		{activityNote(0, 0, true, false), "No request yet: each request of a client shows here as it happens."},
		{activityNote(2, 40, true, false), "2 of the last 40 requests. Select one to open its conversation or see its details."},
		{activityNote(0, 0, true, true), "The activity log is off: nothing is recorded. Turn it on in Settings → Advanced; it applies at the next start."},
		{durationText(0), ""},
		{durationText(2*time.Second + 340*time.Millisecond), "2.3s"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
	kept := agent.ActivityRow{Time: logNow, Client: "id-c", Era: "2025-06-18", Method: agent.ActivityApproval, Agent: "researcher",
		Outcome: agent.OutcomeOK, Reason: "approved by desktop", BytesIn: 1, BytesOut: 2048, Text: "May I write notes.md?", Arguments: `{"path":"notes.md"}`}
	details := activityDetails(kept, logNames)
	for _, want := range []string{"Client: cursor", "Protocol version: 2025-06-18", "Method: approval", "Agent: researcher",
		"Reason: approved by desktop", "Received 1 byte, sent 2048 bytes", "Text: May I write notes.md?", `Arguments: {"path":"notes.md"}`} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
	if d := activityDetails(logRows[1], logNames); !strings.Contains(d, "Client: —") || strings.Contains(d, "Arguments") || strings.Contains(d, "Conversation") {
		t.Errorf("a refusal's details:\n%s", d)
	}
	if d := activityDetails(logRows[0], logNames); !strings.Contains(d, "Arguments: not kept") {
		t.Errorf("a call whose arguments were not kept:\n%s", d)
	}
}

func TestWriteActivity(t *testing.T) {
	var b strings.Builder
	n, err := writeActivity(&b, logRows)
	if err != nil || n != len(logRows) {
		t.Fatalf("wrote %d rows, err %v", n, err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(logRows) {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, line := range lines {
		var got agent.ActivityRow
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		want := logRows[i]
		want.Time = want.Time.Local()
		got.Time = got.Time.Local()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i, diff)
		}
	}
	if !strings.Contains(lines[0], `"clientName":"cursor"`) || strings.Contains(lines[1], "clientName") { // as the core names them
		t.Errorf("client names:\n%s", b.String())
	}
}

// logScreen is the whole desktop with its Log tab on a fake log, the
// tab's follower running until the test ends or stops it. uiCalls counts
// what the desktop hands to fyne's goroutine.
func logScreen(t *testing.T, log *fakeActivity) (v *activityView, ui *testUI, stop func(), uiCalls func() int) {
	t.Helper()
	core := newFakeCore(fakeCore{activity: log})
	core.fakeSettings.clients = []agent.Client{{ID: "id-c", Name: "cursor"}, {ID: "id-d", Name: "claude"}}
	log.clients = core.fakeSettings.clients
	core.fakeConversations.conversations = []agent.ConversationSummary{{Conversation: agent.Conversation{ID: "conv-1", Title: "Sources"}}}
	a, ui := newTestApp(t, core.asCore())
	if a.activity.every.Checked {
		t.Error("the Log shows the protocol's housekeeping unless asked")
	}
	a.activity.every.SetChecked(true) // the log's workings, on every row
	a.refresh()
	a.tabs.SelectIndex(tabLog) // the tab is redrawn only while it can be seen
	ui.settle()
	var mu sync.Mutex
	calls := 0
	do := a.do
	a.do = func(f func()) {
		mu.Lock()
		calls++
		mu.Unlock()
		do(f)
	}
	v = a.activity
	v.core, v.now = log.asCore(), func() time.Time { return logNow }
	ctx, cancel := context.WithCancel(t.Context())
	v.follow(ctx)
	return v, ui, func() {
		cancel()
		ui.settle() // the follower ends, and what it handed over is shown
	}, func() int { mu.Lock(); defer mu.Unlock(); return calls }
}

// cell is what the Log table shows at a row and column.
func cell(v *activityView, row, col int) string {
	o := v.table.CreateCell()
	v.table.UpdateCell(widget.TableCellID{Row: row, Col: col}, o)
	return o.(*widget.Label).Text
}

// TestLogFollowsTheCore: the Log tab shows the last rows, newest on top,
// then the rows recorded while it is open, a burst of them in a few UI
// updates; a row that came both ways shows once.
func TestLogFollowsTheCore(t *testing.T) {
	log := newFakeActivity(logRows...)
	v, ui, stop, uiCalls := logScreen(t, log)
	if v.app.tabs.Items[tabLog].Text != "Log" || len(log.subKind) != 1 || log.subKind[0] != agent.EventActivity {
		t.Fatalf("tab %q; subscribed to %v", v.app.tabs.Items[tabLog].Text, log.subKind)
	}
	const burst = 500
	var rows []agent.ActivityRow
	for i := range burst {
		rows = append(rows, agent.ActivityRow{ID: int64(4 + i), Time: logNow, Client: "id-d", Method: "tools/call", Agent: "scribe", Outcome: agent.OutcomeOK})
	}
	log.send(rows[:burst/2]...)
	ui.runQueued() // fyne's goroutine runs in the middle of the burst
	log.send(rows[burst/2:]...)
	// The copy of a row in the page: the core may both commit a row
	// before the page is read and tell it.
	log.mu.Lock()
	ch := log.sub
	log.mu.Unlock()
	ch <- agent.Event{Kind: agent.EventActivity, Activity: &logRows[0]}
	stop()
	if n := uiCalls(); n > 4 {
		t.Errorf("%d rows took %d UI updates", burst, n)
	}
	if len(v.rows) != burst+len(logRows) || v.rows[0].ID != burst+3 || v.rows[len(v.rows)-1].ID != 1 {
		t.Fatalf("%d rows held, first %d", len(v.rows), v.rows[0].ID)
	}
	if got := v.note.Text; !strings.HasPrefix(got, "503 of the last 503 requests.") {
		t.Errorf("note %q", got)
	}
	if got := cell(v, 0, 1) + " " + cell(v, 0, 2); got != "claude scribe" {
		t.Errorf("top row: %q", got)
	}
	// The filters.
	v.search.SetText("Cursor")
	if got := v.note.Text; !strings.HasPrefix(got, "1 of the last 503 requests.") || cell(v, 0, 3) != "tool error" {
		t.Errorf("filtered by text: note %q, outcome %q", got, cell(v, 0, 3))
	}
	v.search.SetText("")
	v.outcome.SetSelected(string(agent.OutcomeRefused))
	if got := v.note.Text; !strings.HasPrefix(got, "1 of the last 503 requests.") || cell(v, 0, 1) != "—" {
		t.Errorf("filtered by outcome: note %q, client %q", got, cell(v, 0, 1))
	}
}

// TestLogRedrawsOnlyWhenSeen: rows that come while another tab is shown
// wait, undrawn (under load they come with every request); the table
// shows them once the Log tab is selected.
func TestLogRedrawsOnlyWhenSeen(t *testing.T) {
	log := newFakeActivity(logRows...)
	v, ui, stop, _ := logScreen(t, log)
	v.app.tabs.SelectIndex(tabConversations)
	drawn := v.note.Text
	log.send(agent.ActivityRow{ID: 100, Time: logNow, Client: "id-d", Method: "tools/call", Agent: "scribe", Outcome: agent.OutcomeOK})
	stop()
	if v.note.Text != drawn || slices.ContainsFunc(v.shown, func(r agent.ActivityRow) bool { return r.ID == 100 }) {
		t.Errorf("unseen, the tab was redrawn: note %q, was %q", v.note.Text, drawn)
	}
	v.app.tabs.SelectIndex(tabLog)
	ui.settle()
	if got := v.note.Text; !strings.HasPrefix(got, fmt.Sprintf("%d of the last %d requests.", len(logRows)+1, len(logRows)+1)) || cell(v, 0, 2) != "scribe" {
		t.Errorf("selected: note %q, top row's agent %q", got, cell(v, 0, 2))
	}
}

// TestLogKeepsTheLast: the tab holds the last activityKept rows.
func TestLogKeepsTheLast(t *testing.T) {
	log := newFakeActivity()
	v, _, stop, _ := logScreen(t, log)
	var rows []agent.ActivityRow
	for i := range activityKept + 10 {
		rows = append(rows, agent.ActivityRow{ID: int64(i + 1), Time: logNow, Method: "ping", Outcome: agent.OutcomeOK})
	}
	log.send(rows...)
	stop()
	if len(v.rows) != activityKept || v.rows[0].ID != activityKept+10 || v.rows[activityKept-1].ID != 11 {
		t.Errorf("held %d rows, from %d to %d", len(v.rows), v.rows[0].ID, v.rows[len(v.rows)-1].ID)
	}
	if got := v.note.Text; !strings.HasPrefix(got, "1000 of the last 1000 requests.") {
		t.Errorf("note %q", got)
	}
}

// TestLogSaysWhenOff: with the log off the tab says so, and how to turn
// it on.
func TestLogSaysWhenOff(t *testing.T) {
	log := newFakeActivity()
	log.off = true
	v, _, stop, _ := logScreen(t, log)
	stop()
	if got := v.note.Text; !strings.HasPrefix(got, "The activity log is off") {
		t.Errorf("note %q", got)
	}
}

// TestLogOpensARow: selecting a row with a conversation opens it in the
// Conversations tab; one without shows its details.
func TestLogOpensARow(t *testing.T) {
	v, ui, stop, _ := logScreen(t, newFakeActivity(logRows...))
	stop()
	a := v.app
	a.tabs.SelectIndex(tabLog)
	v.table.Select(widget.TableCellID{Row: 0, Col: 4})
	ui.settle()
	if a.tabs.SelectedIndex() != tabConversations || a.conversations.current != "conv-1" {
		t.Errorf("after selecting a call: tab %d, conversation %q", a.tabs.SelectedIndex(), a.conversations.current)
	}
	a.tabs.SelectIndex(tabLog)
	v.table.Select(widget.TableCellID{Row: 1, Col: 0})
	if len(a.dialogs) != 1 || a.tabs.SelectedIndex() != tabLog {
		t.Fatalf("after selecting a refusal: %d dialogs, tab %d", len(a.dialogs), a.tabs.SelectedIndex())
	}
	if !dialogSays(a, "Reason: bad token") {
		t.Error("the details do not give the reason")
	}
	pressEscape(a)
	if len(a.dialogs) != 0 {
		t.Error("Escape left the details open")
	}
}

// dialogSays reports whether a label in the window's top overlay holds
// the text.
func dialogSays(a *App, text string) bool {
	top := a.win.Canvas().Overlays().Top()
	found := false
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Label:
			found = found || strings.Contains(o.Text, text)
		case fyne.Widget:
			r := test.WidgetRenderer(o)
			for _, c := range r.Objects() {
				walk(c)
			}
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		}
	}
	if top != nil {
		walk(top)
	}
	return found
}

// TestLogExport: Export… writes the rows that match the filters, read
// from the core, and says how many; or what went wrong.
func TestLogExport(t *testing.T) {
	log := newFakeActivity(logRows...)
	v, ui, stop, _ := logScreen(t, log)
	stop()
	v.search.SetText("tools/")
	file := newExportFile("/home/ada/deskhand-log.jsonl")
	v.exportTo(file)
	if !v.export.Disabled() {
		t.Error("Export… can be pressed again while it writes")
	}
	ui.settle()
	if got := v.status.Text; got != "Exported 2 requests to /home/ada/deskhand-log.jsonl." || !file.closed || v.export.Disabled() {
		t.Errorf("status %q, closed %v", got, file.closed)
	}
	if last := log.filters[len(log.filters)-1]; last.Limit != activityExported {
		t.Errorf("read with %+v", last)
	}
	if lines := strings.Count(file.String(), "\n"); lines != 2 || !strings.Contains(file.String(), `"method":"tools/list"`) {
		t.Errorf("wrote:\n%s", file.String())
	}

	log.mu.Lock()
	log.err = errors.New("database is locked")
	log.mu.Unlock()
	failed := newExportFile("/home/ada/x.jsonl")
	v.exportTo(failed)
	ui.settle()
	if got := v.status.Text; !strings.HasPrefix(got, "✖ The log was not exported: ") || !failed.closed {
		t.Errorf("status %q, closed %v", got, failed.closed)
	}
}

// TestFollowedKinds: App.Follow's subscription names every kind of event
// the core publishes but the activity log's rows, which the Log tab
// follows on its own.
func TestFollowedKinds(t *testing.T) {
	files, err := filepath.Glob("../../server/agent/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []agent.EventKind
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || spec.Type == nil || fmt.Sprint(spec.Type) != "EventKind" {
				return true
			}
			for _, v := range spec.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					kinds = append(kinds, agent.EventKind(strings.Trim(lit.Value, `"`)))
				}
			}
			return true
		})
	}
	if len(kinds) < 10 {
		t.Fatalf("found only these kinds: %v", kinds)
	}
	for _, k := range kinds {
		if followed := slices.Contains(followedKinds, k); followed == (k == agent.EventActivity) {
			t.Errorf("kind %q: followed by App.Follow %v", k, followed)
		}
	}
}

// TestCtrl6ShowsTheLog: Ctrl+6 shows the Log tab; the other tabs keep
// their keys.
func TestCtrl6ShowsTheLog(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	pressShortcut(t, a, fyne.Key6)
	if got := a.tabs.SelectedIndex(); got != tabLog {
		t.Errorf("Ctrl+6 shows tab %d", got)
	}
	pressShortcut(t, a, fyne.Key5)
	if got := a.tabs.SelectedIndex(); got != tabSettings {
		t.Errorf("Ctrl+5 shows tab %d", got)
	}
}

// TestLogWithTheRealCore: the Log tab shows the rows the real core
// recorded before it was open, then those it records while it is, each
// once, with its client's name.
func TestLogWithTheRealCore(t *testing.T) {
	core := askingCore(t)
	cursor, _, err := core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	a, ui := newTestApp(t, CoreOf(core))
	a.refresh()
	a.tabs.SelectIndex(tabLog)
	ui.settle()
	core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: "initialize", Outcome: agent.OutcomeOK})
	ctx, cancel := context.WithCancel(t.Context())
	a.activity.follow(ctx)
	const n = 40 // within a subscriber's buffer: none is dropped
	for i := range n {
		core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: "tools/call", Agent: "assistant", Outcome: agent.OutcomeOK, Text: fmt.Sprint(i)})
	}
	cancel() // the follower takes what its subscription holds, then ends
	ui.settle()
	v := a.activity
	if len(v.rows) != n+1 || v.rows[0].Text != fmt.Sprint(n-1) || v.rows[n].Method != "initialize" {
		t.Fatalf("%d rows; the first %+v", len(v.rows), v.rows[0])
	}
	seen := map[int64]bool{}
	for _, r := range v.rows {
		if r.ID == 0 || seen[r.ID] {
			t.Fatalf("row ID %d twice or none", r.ID)
		}
		seen[r.ID] = true
	}
	if got := cell(v, 0, 1); got != "cursor" {
		t.Errorf("client %q", got)
	}
}

// activityCells are a row's cells, as activityColumns.
func activityCells(r agent.ActivityRow, names map[string]string, now time.Time) []string {
	cells := make([]string, len(activityColumns))
	for col := range cells {
		cells[col] = activityCell(r, col, names, now)
	}
	return cells
}
