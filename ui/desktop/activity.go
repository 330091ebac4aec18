package desktop

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// The Log tab: the activity log as a live table (time, client, agent,
// outcome, request), newest on top, filtered by what is typed and by
// outcome. Selecting a request opens its conversation, or shows its
// details when it has none; Export… writes the requests that match the
// filters to a file, one JSON object a line.
//
// The tab follows the core's EventActivity rows on a subscription of its
// own (App.Follow's leaves them out), made before the first page is read
// so that no row falls between the two. Under load (hundreds of rows a
// second) the follower only appends each row to a pending list; the first
// row of a burst schedules one UI update, which takes every row pending
// by then, merges them in, refilters and refreshes the table once.

const (
	// activityKept bounds the rows the tab holds, newest first.
	activityKept = 1000
	// activityExported bounds the rows Export… reads from the core.
	activityExported = 100_000
)

// allOutcomes is the outcome filter's choice that keeps every row.
const allOutcomes = "All outcomes"

// outcomeChoices are the outcome filter's choices, as the table words them.
var outcomeChoices = []string{allOutcomes, string(agent.OutcomeOK), string(agent.OutcomeToolError),
	string(agent.OutcomeProtocolError), string(agent.OutcomeRefused), string(agent.OutcomeDropped)}

type activityView struct {
	app  *App
	core Core
	now  func() time.Time // the clock the times are shown against

	// What the follower hands to fyne's goroutine: rows not merged yet,
	// and whether an update that will merge them is scheduled.
	mu        sync.Mutex
	pending   []agent.ActivityRow // oldest first, as they came
	scheduled bool

	// Only on fyne's goroutine.
	rows   []agent.ActivityRow // newest first, at most activityKept
	shown  []agent.ActivityRow // rows that pass the filters
	names  map[string]string   // client names by ID
	loaded bool                // the first page was read
	off    bool                // the core keeps no log: nothing comes
	stale  bool                // rows came while the tab could not be seen
	parked bool                // a flush waits for the tab to be seen

	search  *widget.Entry
	outcome *widget.Select
	every   *widget.Check // the protocol's housekeeping too
	export  *widget.Button
	table   *widget.Table
	note    *widget.Label // "N of the last M requests", or why there are none
	status  *widget.Label // what Export… did
}

func newActivityView(a *App, core Core) *activityView {
	v := &activityView{app: a, core: core, now: time.Now, names: map[string]string{},
		search: widget.NewEntry(), note: plainNote("Reading the log…"), status: feedback()}
	v.search.SetPlaceHolder("Filter by client, agent, method, text or reason")
	v.search.OnChanged = func(string) { v.redraw() }
	v.outcome = widget.NewSelect(outcomeChoices, func(string) { v.redraw() })
	v.outcome.Selected = allOutcomes
	v.every = widget.NewCheck("Every request", func(bool) { v.redraw() })
	v.export = widget.NewButton("Export…", v.chooseExportFile)
	v.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(v.shown), len(activityColumns) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row >= 0 && id.Row < len(v.shown) && id.Col >= 0 && id.Col < len(activityColumns) {
				o.(*widget.Label).SetText(activityCell(v.shown[id.Row], id.Col, v.names, v.now()))
			}
		})
	v.table.ShowHeaderColumn = false
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(activityColumns) {
			l := o.(*widget.Label)
			l.Alignment = fyne.TextAlignLeading // over its cells, which start at the left
			l.SetText(activityColumns[id.Col].title)
		}
	}
	for i, c := range activityColumns {
		v.table.SetColumnWidth(i, c.width)
	}
	v.table.OnSelected = func(id widget.TableCellID) {
		v.table.UnselectAll()
		if id.Row >= 0 && id.Row < len(v.shown) {
			v.openRow(v.shown[id.Row])
		}
	}
	return v
}

func (v *activityView) content() fyne.CanvasObject {
	filters := container.NewBorder(nil, nil, nil, container.NewHBox(v.every, v.outcome, v.export), v.search)
	return container.NewBorder(container.NewVBox(filters, v.note, v.status), nil, nil, nil, v.table)
}

// follow shows the log and keeps it live until ctx ends: it subscribes to
// new rows first, then reads the last page, so that a row recorded
// meanwhile is either in the page or comes as an event (or both: the
// merge drops the copy).
func (v *activityView) follow(ctx context.Context) {
	events := v.core.Events.Subscribe(ctx, agent.EventActivity)
	v.load()
	v.app.goStart(func() {
		for e := range events {
			if e.Activity != nil {
				v.arrived(*e.Activity)
			}
		}
	})
}

// load reads the last page of the log, off fyne's goroutine, and merges
// the rows that came meanwhile.
func (v *activityView) load() {
	v.app.background(func(ctx context.Context) func() {
		page, err := v.core.Activity.List(ctx, agent.ActivityFilter{Limit: activityKept})
		return func() {
			v.loaded, v.off = true, !v.core.Activity.Enabled()
			if err != nil {
				v.app.log.Warn("read the activity log", "err", err)
				say(v.status, "✖ The log could not be read: "+agent.UserMessage(err)+" New requests still show as they come.")
			}
			v.names = clientNames(v.core.Clients.List())
			v.rows = mergeActivity(v.rows, page)
			v.show()
		}
	})
}

// arrived takes a row from the follower: it waits in pending, and the
// first row of a burst schedules the one update that merges them all.
// While the tab cannot be seen, rows wait (the newest activityKept) and
// the update is parked until it can.
func (v *activityView) arrived(r agent.ActivityRow) {
	v.mu.Lock()
	v.pending = append(v.pending, r)
	if n := len(v.pending); n > 2*activityKept {
		v.pending = slices.Delete(v.pending, 0, n-activityKept)
	}
	schedule := !v.scheduled
	v.scheduled = true
	v.mu.Unlock()
	if schedule {
		v.app.onUI(v.flush)
	}
}

// flush merges the rows pending, on fyne's goroutine, and shows them;
// while the tab cannot be seen it parks (becameVisible flushes).
func (v *activityView) flush() {
	if !v.visible() {
		v.parked = true // scheduled stays set: arrivals schedule nothing
		return
	}
	v.mu.Lock()
	in := v.pending
	v.pending, v.scheduled = nil, false
	v.mu.Unlock()
	slices.Reverse(in) // newest first
	v.rows = mergeActivity(in, v.rows)
	for _, r := range in {
		if _, known := v.names[r.Client]; r.Client != "" && r.Client != agent.LocalPrincipal && !known {
			v.names = clientNames(v.core.Clients.List()) // a client made since (in memory)
			break
		}
	}
	v.show()
}

// show redraws the table if it can be seen, else once it can: under load
// rows come with every request.
func (v *activityView) show() {
	if !v.visible() {
		v.stale = true
		return
	}
	v.redraw()
}

// visible tells whether the Log tab can be seen.
func (v *activityView) visible() bool {
	return v.app.tabSeen(tabLog)
}

// becameVisible shows the rows that came while the tab was unseen.
func (v *activityView) becameVisible() {
	if v == nil || !v.visible() {
		return
	}
	if v.parked {
		v.parked = false
		v.flush()
	}
	if v.stale {
		v.stale = false
		v.redraw()
	}
}

// clientsChanged re-reads the clients' names (a client made, renamed or
// revoked).
func (v *activityView) clientsChanged() {
	if v == nil {
		return // a screen tested alone
	}
	v.names = clientNames(v.core.Clients.List())
	v.table.Refresh()
}

// redraw refilters the rows and refreshes the table once.
func (v *activityView) redraw() {
	v.shown = filterActivity(v.rows, v.names, v.filter())
	v.note.SetText(activityNote(len(v.shown), len(v.rows), v.loaded, v.off))
	v.table.Refresh()
}

// activityNote says what the table shows, and whether the log is kept.
func activityNote(shown, held int, loaded, off bool) string {
	var note string
	switch {
	case held == 0 && !loaded:
		return "Reading the log…"
	case held == 0:
		note = "No request yet: each request of a client shows here as it happens."
	default:
		note = fmt.Sprintf("%d of the last %d requests. Select one to open its conversation or see its details.", shown, held)
	}
	if off {
		note = "The activity log is off: nothing is recorded. Turn it on in Settings → Advanced; it applies at the next start."
	}
	return note
}

// openRow opens the row's conversation in the Conversations tab, or shows
// the row's details when it has none.
func (v *activityView) openRow(r agent.ActivityRow) {
	if r.Conversation != "" && v.app.conversations != nil {
		v.app.conversations.open(r.Conversation)
		if v.app.tabs != nil {
			v.app.tabs.SelectIndex(tabConversations)
		}
		return
	}
	details := widget.NewLabel(activityDetails(r, v.names))
	details.Wrapping = fyne.TextWrapWord
	details.Selectable = true
	scroll := container.NewVScroll(details)
	scroll.SetMinSize(fyne.NewSize(460, 260))
	v.app.showDialog(dialog.NewCustom("Request at "+r.Time.Local().Format("Jan 2 15:04:05"), "Close", scroll, v.app.win), nil)
}

// chooseExportFile asks where to write the log, then writes it.
func (v *activityView) chooseExportFile() {
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		switch {
		case err != nil:
			say(v.status, "✖ The log was not exported: "+agent.UserMessage(err))
		case w != nil: // nil: cancelled
			v.exportTo(w)
		}
	}, v.app.win)
	d.SetFileName("deskhand-log.jsonl")
	d.Show()
}

// exportTo writes the rows that match the filters, read from the core
// (at most activityExported), to w, off fyne's goroutine, and says how
// many it wrote or what went wrong.
func (v *activityView) exportTo(w fyne.URIWriteCloser) {
	filter, names := v.filter(), v.names
	v.export.Disable()
	say(v.status, "Exporting the log…")
	v.app.background(func(ctx context.Context) func() {
		n, err := func() (int, error) {
			rows, err := v.core.Activity.List(ctx, agent.ActivityFilter{Limit: activityExported})
			if err != nil {
				return 0, err
			}
			return writeActivity(w, filterActivity(rows, names, filter))
		}()
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s: %w", w.URI().Name(), cerr)
		}
		return func() {
			v.export.Enable()
			if err != nil {
				v.app.log.Warn("export the activity log", "err", err)
				say(v.status, "✖ The log was not exported: "+agent.UserMessage(err))
				return
			}
			say(v.status, fmt.Sprintf("Exported %s to %s.", countOf(n, "request"), w.URI().Path()))
		}
	})
}

// writeActivity writes rows as JSON Lines; it returns how many it wrote.
func writeActivity(w io.Writer, rows []agent.ActivityRow) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i, r := range rows {
		if err := enc.Encode(r); err != nil {
			return i, fmt.Errorf("write the log: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write the log: %w", err)
	}
	return len(rows), nil
}

type activityColumn struct {
	title string
	width float32
}

var activityColumns = []activityColumn{
	{"Time", 120}, {"Client", 120}, {"Agent", 120}, {"Outcome", 170}, {"Request", 460},
}

// activityCell is one cell of a row, computed alone since the table asks
// cell by cell: the time (with the day when it is not now's), the
// client's name, the agent, the outcome with its reason, and the request
// (method, text, duration).
func activityCell(r agent.ActivityRow, col int, names map[string]string, now time.Time) string {
	switch col {
	case 0:
		at := r.Time.In(now.Location())
		if y, m, d := at.Date(); now.Year() == y && now.Month() == m && now.Day() == d {
			return at.Format(time.TimeOnly)
		}
		return at.Format("Jan 2 15:04")
	case 1:
		return logClient(r.Client, names)
	case 2:
		return r.Agent
	case 3:
		if r.Reason != "" {
			return string(r.Outcome) + " (" + r.Reason + ")"
		}
		return string(r.Outcome)
	case 4:
		request := r.Method
		if r.Text != "" {
			request += ": " + oneLine(r.Text)
		}
		if d := durationText(r.Duration); d != "" {
			request += " · " + d
		}
		return request
	}
	return ""
}

// logClient names a row's client as the rest of the desktop does
// (clientName), and "—" when it was refused before a client was known.
func logClient(id string, names map[string]string) string {
	switch {
	case id == "":
		return "—"
	case id == agent.LocalPrincipal:
		return "this computer"
	}
	return cmp.Or(names[id], "a revoked client")
}

// durationText says how long a request took, coarsely; "" for none.
func durationText(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return "under 1 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}

// oneLine puts text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// activityFilter is what the Log tab's filters keep: rows that say query
// (by client, agent, method, text or reason), of that outcome, and the
// protocol's housekeeping only with every.
type activityFilter struct {
	query, outcome string
	every          bool
}

func (v *activityView) filter() activityFilter {
	return activityFilter{query: v.search.Text, outcome: v.outcome.Selected, every: v.every.Checked}
}

// housekeeping is a request that went well and that a person does not
// ask about: the protocol's own (initialize, lists, notifications, a
// session's GET and DELETE), not a call, a question or an approval.
func housekeeping(r agent.ActivityRow) bool {
	if r.Outcome != agent.OutcomeOK {
		return false
	}
	switch r.Method {
	case "tools/call", agent.ActivityQuestion, agent.ActivityApproval:
		return false
	}
	return true
}

// filterActivity keeps the rows whose outcome is the one chosen and whose
// client, agent, method, text (as the table shows it, on one line) or
// reason holds what was typed, ignoring case.
func filterActivity(rows []agent.ActivityRow, names map[string]string, f activityFilter) []agent.ActivityRow {
	query, outcome := strings.ToLower(strings.TrimSpace(f.query)), f.outcome
	var out []agent.ActivityRow
	for _, r := range rows {
		if outcome != "" && outcome != allOutcomes && string(r.Outcome) != outcome {
			continue
		}
		if !f.every && housekeeping(r) {
			continue
		}
		if query != "" && !strings.Contains(strings.ToLower(strings.Join([]string{logClient(r.Client, names), r.Agent, r.Method, oneLine(r.Text), r.Reason}, "\n")), query) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// mergeActivity merges two lists of rows, each newest first (newer: those
// that came later), into one, newest first by ID, without the rows of
// newer that older holds too, at most activityKept. Rows without an ID
// (a core that keeps no log) are never taken for copies and keep their
// order.
func mergeActivity(newer, older []agent.ActivityRow) []agent.ActivityRow {
	held := make(map[int64]bool, len(older))
	for _, r := range older {
		if r.ID != 0 {
			held[r.ID] = true
		}
	}
	out := make([]agent.ActivityRow, 0, min(len(newer)+len(older), activityKept))
	for _, r := range newer {
		if r.ID == 0 || !held[r.ID] {
			out = append(out, r)
		}
	}
	out = append(out, older...)
	slices.SortStableFunc(out, func(a, b agent.ActivityRow) int { return cmp.Compare(b.ID, a.ID) })
	if len(out) > activityKept {
		out = out[:activityKept]
	}
	return out
}

// activityDetails is everything the log holds of a row, to read.
func activityDetails(r agent.ActivityRow, names map[string]string) string {
	lines := []string{
		"When: " + r.Time.Local().Format("Mon Jan 2 2006 15:04:05.000"),
		"Client: " + logClient(r.Client, names),
	}
	add := func(label, value string) {
		if value != "" {
			lines = append(lines, label+": "+value)
		}
	}
	add("Protocol version", r.Era)
	add("Method", r.Method)
	add("Agent", r.Agent)
	add("Conversation", r.Conversation)
	add("Took", durationText(r.Duration))
	add("Outcome", string(r.Outcome))
	add("Reason", r.Reason)
	lines = append(lines, fmt.Sprintf("Received %s, sent %s", countOf(int(r.BytesIn), "byte"), countOf(int(r.BytesOut), "byte")))
	add("Text", r.Text)
	if r.Arguments != "" {
		lines = append(lines, "Arguments: "+r.Arguments)
	} else if r.Agent != "" {
		lines = append(lines, "Arguments: not kept (an agent's editor can keep them, under Questions and approvals).")
	}
	return strings.Join(lines, "\n")
}

// clientNames are the clients' names by ID.
func clientNames(cs []agent.Client) map[string]string {
	names := make(map[string]string, len(cs))
	for _, c := range cs {
		names[c.ID] = c.Name
	}
	return names
}
