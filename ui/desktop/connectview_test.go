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
	return `{"mcpServers": {"deskhand": {"url": "http://127.0.0.1:7345/mcp"}}}`, nil
}

func (f *fakeConnector) Link(_ context.Context, id string) (string, string, error) {
	return "cursor://anysphere.cursor-deeplink/mcp/install?name=deskhand&config=e30%3D",
		`{"url":"http://127.0.0.1:7345/mcp","headers":{"Authorization":"Bearer dh_SECRET-token_1"}}`, nil
}

func TestClientActions(t *testing.T) {
	tests := []struct {
		state                            ClientState
		label                            string
		connect, disconnect, rotateToken bool
	}{
		{ClientState{}, "Connect", false, false, false},
		{ClientState{Installed: true}, "Connect", true, false, false},
		{ClientState{Installed: true, Connected: true}, "Repair", true, true, true},
		{ClientState{Installed: true, Connected: true, Working: true}, "Connect", false, true, true},
	}
	for _, tc := range tests {
		label, c, d, r := clientActions(tc.state)
		if label != tc.label || c != tc.connect || d != tc.disconnect || r != tc.rotateToken {
			t.Errorf("clientActions(%+v) = %q %v %v %v", tc.state, label, c, d, r)
		}
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

func TestConnectTab(t *testing.T) {
	conn := &fakeConnector{states: map[string]ClientState{
		"cursor": {ID: "cursor", Name: "Cursor", File: "/home/u/.cursor/mcp.json", Installed: true, Status: "not connected", HasLink: true},
		"codex":  {ID: "codex", Name: "Codex", Status: "not installed"},
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
	cursor, codex := buttons(t, v.rows.Objects[0]), buttons(t, v.rows.Objects[1])
	if codex["Connect"].Disabled() == false || cursor["Connect"].Disabled() || !cursor["Disconnect"].Disabled() {
		t.Error("buttons do not follow the clients' states")
	}
	if codex["Open in Codex"] != nil || cursor["Open in Cursor"] == nil {
		t.Error("install links offered where there are none, or missing")
	}

	// Connect shows the exact entry first, and writes only once confirmed.
	test.Tap(cursor["Connect"])
	top := a.win.Canvas().Overlays().Top()
	if top == nil || !strings.Contains(texts(t, top), `"deskhand": {"url": "http://127.0.0.1:7345/mcp"}`) || !strings.Contains(texts(t, top), "/home/u/.cursor/mcp.json") {
		t.Fatalf("no preview before writing: %v", top)
	}
	if len(conn.calls) != 0 {
		t.Fatal("wrote before the person confirmed")
	}
	test.Tap(buttons(t, top)["Write it"])
	drain()
	if !strings.Contains(v.status.Text, "verified") || !strings.Contains(texts(t, v.rows.Objects[0]), "written, verified") {
		t.Errorf("after connect: status %q, row %q", v.status.Text, texts(t, v.rows.Objects[0]))
	}

	// Rotate asks too, and says the old token stops working.
	test.Tap(buttons(t, v.rows.Objects[0])["Rotate token"])
	top = a.win.Canvas().Overlays().Top()
	if !strings.Contains(texts(t, top), "new token") {
		t.Errorf("rotate dialog: %q", texts(t, top))
	}
	test.Tap(buttons(t, top)["Write it"])
	drain()

	// The install link is shown with its token hidden.
	test.Tap(buttons(t, v.rows.Objects[0])["Open in Cursor"])
	drain()
	top = a.win.Canvas().Overlays().Top()
	if shown := texts(t, top); strings.Contains(shown, "SECRET") || !strings.Contains(shown, "Bearer dh_…") || !strings.Contains(shown, "command line") {
		t.Errorf("link dialog shows %q", shown)
	}
	test.Tap(buttons(t, top)["Cancel"])

	test.Tap(buttons(t, v.rows.Objects[0])["Disconnect"])
	drain()
	if want := []string{"connect cursor", "rotate cursor", "disconnect cursor"}; !cmp.Equal(conn.calls, want) {
		t.Errorf("calls = %v, want %v", conn.calls, want)
	}
	if !strings.Contains(texts(t, v.rows.Objects[0]), "not connected") {
		t.Errorf("row after disconnect: %q", texts(t, v.rows.Objects[0]))
	}

	// A failure is said, and the row stays as it was.
	conn.fail = errors.New("/home/u/.cursor/mcp.json is not valid JSON, left untouched")
	test.Tap(buttons(t, v.rows.Objects[0])["Connect"])
	test.Tap(buttons(t, a.win.Canvas().Overlays().Top())["Write it"])
	drain()
	if !strings.Contains(v.status.Text, "not valid JSON") {
		t.Errorf("failure not shown: %q", v.status.Text)
	}
}

func TestConnectTabWithoutConnector(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}))
	a.tabs.SelectIndex(tabConnect)
	if !strings.Contains(a.connect.status.Text, "not available") {
		t.Errorf("status = %q", a.connect.status.Text)
	}
}
