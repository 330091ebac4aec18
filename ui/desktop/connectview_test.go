package desktop

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"
)

// fakeConnector records what the Connect tab asks for.
type fakeConnector struct {
	mu     sync.Mutex
	states map[string]ClientState
	calls  []string
	fail   error
}

func (f *fakeConnector) Clients(context.Context) []ClientState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []ClientState{f.states["cursor"], f.states["codex"]}
}

func (f *fakeConnector) Connect(_ context.Context, id string, rotate bool) (ClientState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := "connect " + id
	if rotate {
		call = "rotate " + id
	}
	f.calls = append(f.calls, call)
	if f.fail != nil {
		return ClientState{}, f.fail
	}
	st := f.states[id]
	st.Connected, st.Working, st.Status = true, true, "written, verified (1 tool)"
	f.states[id] = st
	return st, nil
}

func (f *fakeConnector) Disconnect(_ context.Context, id string) (ClientState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "disconnect "+id)
	st := f.states[id]
	st.Connected, st.Working, st.Status = false, false, "not connected"
	f.states[id] = st
	return st, nil
}

func (f *fakeConnector) Preview(id string) (string, error) {
	return `{"mcpServers": {"deskhand": {"url": "http://127.0.0.1:7345/mcp", "headers": {"Authorization": "Bearer <a new token for ` + id + `>"}}}}`, nil
}

func (f *fakeConnector) LinkPreview(_ context.Context, id string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "preview link "+id)
	return `{"url":"http://127.0.0.1:7345/mcp","headers":{"Authorization":"Bearer <a new token for ` + id + `>"}}`, true, nil
}

// Link mints: the test fails if it is called before the person agrees.
func (f *fakeConnector) Link(_ context.Context, id string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "link "+id)
	return "cursor://anysphere.cursor-deeplink/mcp/install?name=deskhand&config=e30%3D",
		`{"url":"http://127.0.0.1:7345/mcp","headers":{"Authorization":"Bearer dh_SECRET-token_1"}}`, nil
}

func (f *fakeConnector) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestClientRowLogic(t *testing.T) {
	notInstalled := ClientState{Name: "Codex"}
	installed := ClientState{Name: "Cursor", Installed: true, HasLink: true}
	broken := ClientState{Name: "Cursor", Installed: true, Connected: true, HasLink: true}
	working := ClientState{Name: "Codex", Installed: true, Connected: true, Working: true}
	tests := []struct {
		state   ClientState
		chip    string
		primary string
		menu    []string
	}{
		{notInstalled, "Not installed", "", []string{"Copy the entry…", "Details…"}},
		{ClientState{Name: "VS Code", HasLink: true}, "Not installed", "", []string{"Copy the entry…", "Details…"}},
		{installed, "Not connected", "Connect", []string{"Copy the entry…", "Open in Cursor…", "Details…"}},
		{broken, "Needs repair", "Repair", []string{"Copy the entry…", "Rotate token…", "Disconnect…", "Open in Cursor…", "Details…"}},
		{working, "Connected", "", []string{"Copy the entry…", "Rotate token…", "Disconnect…", "Details…"}},
	}
	for _, tc := range tests {
		chip, _ := clientChip(tc.state)
		var menu []string
		for _, a := range clientMenu(tc.state) {
			menu = append(menu, a.label(tc.state))
		}
		if chip != tc.chip || primaryAction(tc.state) != tc.primary || !cmp.Equal(menu, tc.menu) {
			t.Errorf("%+v: chip %q, primary %q, menu %q", tc.state, chip, primaryAction(tc.state), menu)
		}
	}
	if _, imp := clientChip(working); imp != widget.SuccessImportance {
		t.Error("a working client's chip is not green")
	}
	if _, imp := clientChip(broken); imp != widget.WarningImportance {
		t.Error("a broken client's chip does not warn")
	}
}

func TestMaskToken(t *testing.T) {
	for in, want := range map[string]string{
		`"Authorization":"Bearer dh_abc-DEF_123"}`: `"Authorization":"Bearer dh_…"}`,
		`Bearer dh_x Bearer dh_y`:                  `Bearer dh_… Bearer dh_…`,
		`Bearer dh_tail`:                           `Bearer dh_…`,
		`no token here`:                            `no token here`,
	} {
		if got := maskToken(in); got != want {
			t.Errorf("maskToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// buttons finds the buttons under o, by label.
func buttons(t *testing.T, o fyne.CanvasObject) map[string]*widget.Button {
	t.Helper()
	found := map[string]*widget.Button{}
	walk(t, o, func(o fyne.CanvasObject) bool {
		b, ok := o.(*widget.Button)
		if ok {
			found[b.Text] = b
		}
		return ok
	})
	return found
}

// texts gathers the labels' text under o.
func texts(t *testing.T, o fyne.CanvasObject) string {
	t.Helper()
	var b strings.Builder
	walk(t, o, func(o fyne.CanvasObject) bool {
		l, ok := o.(*widget.Label)
		if ok {
			b.WriteString(l.Text + "\n")
		}
		return ok
	})
	return b.String()
}

// walk visits o and what it holds, through containers and widgets'
// renderers, not below an object visit reports it took.
func walk(t *testing.T, o fyne.CanvasObject, visit func(fyne.CanvasObject) bool) {
	if visit(o) {
		return
	}
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			walk(t, c, visit)
		}
	case fyne.Widget:
		for _, c := range test.TempWidgetRenderer(t, w).Objects() {
			walk(t, c, visit)
		}
	}
}

// menuItem is the entry of a client's "⋯" menu with that label.
func menuItem(t *testing.T, v *connectView, row int, label string) *fyne.MenuItem {
	t.Helper()
	for _, it := range v.menu(v.clients[row]).Items {
		if it.Label == label {
			return it
		}
	}
	t.Fatalf("no %q in %s's menu", label, v.clients[row].Name)
	return nil
}

func TestConnectTab(t *testing.T) {
	conn := &fakeConnector{states: map[string]ClientState{
		"cursor": {ID: "cursor", Name: "Cursor", File: "/home/u/.cursor/mcp.json", Installed: true, Status: "not connected", HasLink: true},
		"codex":  {ID: "codex", Name: "Codex", File: "/home/u/.codex/config.toml", Status: "not installed"},
	}}
	a, ui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{}), Options{Connector: conn}))
	drain := ui.settle
	a.win.Resize(fyne.NewSize(900, 600))
	a.tabs.SelectIndex(tabConnect) // the first visit checks every client
	drain()
	v := a.connect
	if len(v.rows.Objects) != 2 {
		t.Fatalf("%d rows", len(v.rows.Objects))
	}
	// Compact: ten clients fit in 600 px.
	for i, r := range v.rows.Objects {
		if h := r.MinSize().Height; h > 48 {
			t.Errorf("row %d is %.0f px high", i, h)
		}
	}
	cursor, codex := buttons(t, v.rows.Objects[0]), buttons(t, v.rows.Objects[1])
	if codex["Connect"] != nil || cursor["Connect"] == nil || cursor["Disconnect"] != nil {
		t.Error("primary actions do not follow the clients' states")
	}
	if !strings.Contains(texts(t, v.rows.Objects[0]), "Not connected") || !strings.Contains(texts(t, v.rows.Objects[1]), "Not installed") {
		t.Errorf("chips: %q, %q", texts(t, v.rows.Objects[0]), texts(t, v.rows.Objects[1]))
	}
	if strings.Contains(texts(t, v.rows.Objects[0]), "/home/u/.cursor/mcp.json") {
		t.Error("the file shows in the row, not on demand")
	}

	// Connect shows the exact entry first, and writes only once confirmed.
	test.Tap(cursor["Connect"])
	top := a.win.Canvas().Overlays().Top()
	if top == nil || !strings.Contains(texts(t, top), `"deskhand": {"url": "http://127.0.0.1:7345/mcp"`) || !strings.Contains(texts(t, top), "/home/u/.cursor/mcp.json") {
		t.Fatalf("no preview before writing: %v", top)
	}
	if len(conn.called()) != 0 {
		t.Fatal("wrote before the person confirmed")
	}
	test.Tap(buttons(t, top)["Connect"])
	drain()
	if row := texts(t, v.rows.Objects[0]); !strings.Contains(row, "written, verified") || !strings.Contains(row, "Connected") {
		t.Errorf("after connect: row %q", row)
	}
	if buttons(t, v.rows.Objects[0])["Connect"] != nil {
		t.Error("a working client still offers Connect")
	}

	// Rotate asks too, and says the old token stops working.
	menuItem(t, v, 0, "Rotate token…").Action()
	top = a.win.Canvas().Overlays().Top()
	if !strings.Contains(texts(t, top), "new token") {
		t.Errorf("rotate dialog: %q", texts(t, top))
	}
	test.Tap(buttons(t, top)["Rotate token"])
	drain()

	// The install link is shown without minting; cancelled, nothing is
	// minted at all.
	menuItem(t, v, 0, "Open in Cursor…").Action()
	drain()
	top = a.win.Canvas().Overlays().Top()
	if shown := texts(t, top); !strings.Contains(shown, "<a new token for cursor>") || !strings.Contains(shown, "command line") {
		t.Errorf("link dialog shows %q", shown)
	}
	test.Tap(buttons(t, top)["Cancel"])
	drain()
	if want := []string{"connect cursor", "rotate cursor", "preview link cursor"}; !cmp.Equal(conn.called(), want) {
		t.Errorf("after a cancelled link: calls = %v, want %v", conn.called(), want)
	}
	menuItem(t, v, 0, "Open in Cursor…").Action()
	drain()
	test.Tap(buttons(t, a.win.Canvas().Overlays().Top())["Open"])
	drain()
	if calls := conn.called(); calls[len(calls)-1] != "link cursor" || !strings.Contains(texts(t, v.rows.Objects[0]), "Opened the link") {
		t.Errorf("after Open: calls %v, row %q", calls, texts(t, v.rows.Objects[0]))
	}

	// Disconnect asks, naming the action.
	menuItem(t, v, 0, "Disconnect…").Action()
	top = a.win.Canvas().Overlays().Top()
	if !strings.Contains(texts(t, top), "revoke") {
		t.Errorf("disconnect dialog: %q", texts(t, top))
	}
	test.Tap(buttons(t, top)["Disconnect"])
	drain()
	if calls := conn.called(); calls[len(calls)-1] != "disconnect cursor" {
		t.Errorf("calls = %v", calls)
	}
	if !strings.Contains(texts(t, v.rows.Objects[0]), "not connected") {
		t.Errorf("row after disconnect: %q", texts(t, v.rows.Objects[0]))
	}

	// Any client's entry can be copied, without a token and without
	// minting one.
	before := len(conn.called())
	menuItem(t, v, 1, "Copy the entry…").Action()
	top = a.win.Canvas().Overlays().Top()
	if !strings.Contains(texts(t, top), "without a token") {
		t.Errorf("copy dialog: %q", texts(t, top))
	}
	test.Tap(buttons(t, top)["Copy"])
	if got := a.fy.Clipboard().Content(); !strings.Contains(got, "<a new token for codex>") || len(conn.called()) != before {
		t.Errorf("copied %q; calls %v", got, conn.called())
	}

	// Details show the file on demand.
	menuItem(t, v, 1, "Details…").Action()
	if !strings.Contains(texts(t, a.win.Canvas().Overlays().Top()), "/home/u/.codex/config.toml") {
		t.Error("details do not name the file")
	}

	// A failure is said in the row, and the row stays as it was.
	conn.mu.Lock()
	conn.fail = errors.New("/home/u/.cursor/mcp.json is not valid JSON, left untouched")
	conn.mu.Unlock()
	test.Tap(buttons(t, v.rows.Objects[0])["Connect"])
	test.Tap(buttons(t, a.win.Canvas().Overlays().Top())["Connect"])
	drain()
	if row := texts(t, v.rows.Objects[0]); !strings.Contains(row, "not valid JSON") || !strings.Contains(row, "Not connected") {
		t.Errorf("failure not shown in the row: %q", row)
	}
}

func TestConnectTabWithoutConnector(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}))
	a.tabs.SelectIndex(tabConnect)
	if !strings.Contains(a.connect.status.Text, "not available") {
		t.Errorf("status = %q", a.connect.status.Text)
	}
}
