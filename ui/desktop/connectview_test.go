package desktop

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
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
	// extension stands in for writing the extension; nil: written at
	// /data/Deskhand.mcpb for a system Claude Desktop runs on.
	extension func(ctx context.Context, progress func(done, total int64)) (string, bool, error)
}

func (f *fakeConnector) Extension(ctx context.Context, progress func(done, total int64)) (string, bool, error) {
	f.mu.Lock()
	f.calls = append(f.calls, "extension")
	write := f.extension
	f.mu.Unlock()
	if write == nil {
		progress(100, 100)
		return "/data/Deskhand.mcpb", true, nil
	}
	return write(ctx, progress)
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
		{ClientState{Name: "Claude Desktop", Extension: true}, "Not installed", "", []string{"Copy the entry…", "Install as a Claude Desktop extension…", "Details…"}},
		{ClientState{Name: "Claude Desktop", Installed: true, Extension: true}, "Not connected", "Connect", []string{"Copy the entry…", "Install as a Claude Desktop extension…", "Details…"}},
		{ClientState{Name: "Claude Desktop", Installed: true, Connected: true, Working: true, Extension: true}, "Connected", "",
			[]string{"Copy the entry…", "Rotate token…", "Disconnect…", "Install as a Claude Desktop extension…", "Details…"}},
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
	a, ui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{}).asCore(), Options{Connector: conn}))
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
	a, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	a.tabs.SelectIndex(tabConnect)
	if !strings.Contains(a.connect.status.Text, "not available") {
		t.Errorf("status = %q", a.connect.status.Text)
	}
}

func TestExtensionDone(t *testing.T) {
	const path = `C:\Users\ann\AppData\Roaming\Deskhand\Deskhand.mcpb`
	tests := []struct {
		name                    string
		installable, configured bool
		wantOpen                bool
		want, wantNot           []string // in the dialog's text
	}{
		{"Windows or macOS", true, false, true, []string{path, "Claude Desktop asks whether to install", "Install Extension", "keychain"}, []string{"Disconnect"}},
		{"and a config entry", true, true, true, []string{"Claude Desktop asks whether to install", "choose Disconnect…", "twice"}, nil},
		{"Linux", false, true, false, []string{path, "Claude Desktop runs on Windows and macOS", "saved"}, []string{"opened"}},
	}
	for _, tt := range tests {
		note, text, open := extensionDone(tt.installable, path, tt.configured)
		if open != tt.wantOpen || note == "" {
			t.Errorf("%s: open %v, note %q", tt.name, open, note)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q is not in %q", tt.name, w, text)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q is in %q", tt.name, w, text)
			}
		}
	}
	for in, want := range map[string]string{
		`C:\Users\a b\Deskhand.mcpb`:       "file:///C:/Users/a%20b/Deskhand.mcpb",
		"/Users/ann/Library/Deskhand.mcpb": "file:///Users/ann/Library/Deskhand.mcpb",
	} {
		// ToSlash turns backslashes only on Windows: build the Windows
		// case from slashes elsewhere.
		if got := fileURL(filepath.FromSlash(strings.ReplaceAll(in, `\`, "/"))).String(); got != want {
			t.Errorf("fileURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConnectTabExtension: Claude Desktop's menu writes the extension in
// the background, with its progress, then opens it with the system (where
// Claude Desktop runs) and says what happens next; a failure, a refusal to
// open and a cancel are said in the row.
func TestConnectTabExtension(t *testing.T) {
	claude := ClientState{ID: "claude-desktop", Name: "Claude Desktop", Installed: true, Connected: true, Working: true, Extension: true, Status: "connected, verified (1 tool)"}
	setup := func(t *testing.T, write func(context.Context, func(int64, int64)) (string, bool, error)) (*connectView, *testUI, *fakeConnector, *[]string) {
		conn := &fakeConnector{states: map[string]ClientState{"cursor": claude, "codex": {ID: "codex", Name: "Codex"}}, extension: write}
		a, ui := withTestUI(t, New(test.NewTempApp(t), newFakeCore(fakeCore{}).asCore(), Options{Connector: conn}))
		a.win.Resize(fyne.NewSize(900, 600))
		a.tabs.SelectIndex(tabConnect)
		ui.settle()
		var opened []string
		a.connect.open = func(u *url.URL) error {
			opened = append(opened, u.String())
			if strings.Contains(u.Path, "unopenable") {
				return errors.New("no program opens .mcpb files")
			}
			return nil
		}
		return a.connect, ui, conn, &opened
	}
	const label = "Install as a Claude Desktop extension…"
	tests := []struct {
		name       string
		write      func(context.Context, func(int64, int64)) (string, bool, error)
		wantOpened []string
		wantRow    string
		wantDialog string // "" when none follows
	}{
		{"Windows or macOS", nil, []string{"file:///data/Deskhand.mcpb"}, "Opened the extension", "choose Disconnect…"},
		{"Linux", func(_ context.Context, progress func(int64, int64)) (string, bool, error) {
			progress(1, 1)
			return "/data/Deskhand.mcpb", false, nil
		}, nil, "Saved the extension: /data/Deskhand.mcpb", "Claude Desktop runs on Windows and macOS"},
		{"the system cannot open it", func(context.Context, func(int64, int64)) (string, bool, error) {
			return "/data/unopenable.mcpb", true, nil
		}, []string{"file:///data/unopenable.mcpb"}, "could not open it: no program opens .mcpb files", "Open it yourself"},
		{"not written", func(context.Context, func(int64, int64)) (string, bool, error) {
			return "", false, errors.New("cannot write in /data")
		}, nil, "✖ cannot write in /data", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ui, conn, opened := setup(t, tt.write)
			menuItem(t, v, 0, label).Action()
			ui.settle()
			if calls := conn.called(); !cmp.Equal(calls, []string{"extension"}) {
				t.Errorf("calls %v, want [extension]", calls)
			}
			if !cmp.Equal(*opened, tt.wantOpened) {
				t.Errorf("opened %v, want %v", *opened, tt.wantOpened)
			}
			if row := texts(t, v.rows.Objects[0]); !strings.Contains(row, tt.wantRow) {
				t.Errorf("row %q, want %q in it", row, tt.wantRow)
			}
			top := v.app.win.Canvas().Overlays().Top()
			switch {
			case tt.wantDialog == "" && top != nil:
				t.Errorf("a dialog is left: %q", texts(t, top))
			case tt.wantDialog != "" && (top == nil || !strings.Contains(texts(t, top), tt.wantDialog)):
				t.Errorf("no dialog saying %q: %v", tt.wantDialog, top)
			}
		})
	}

	t.Run("progress, then cancelled", func(t *testing.T) {
		v, ui, _, opened := setup(t, func(ctx context.Context, progress func(int64, int64)) (string, bool, error) {
			progress(40, 100)
			<-ctx.Done()
			return "", false, ctx.Err()
		})
		menuItem(t, v, 0, label).Action()
		menuItem(t, v, 0, label).Action() // a second one while writing does nothing
		ui.waitQueued(1)                  // the progress
		ui.mu.Lock()
		queued := ui.queued
		ui.queued = nil
		ui.mu.Unlock()
		for _, f := range queued {
			f()
		}
		top := v.app.win.Canvas().Overlays().Top()
		var bar *widget.ProgressBar
		walk(t, top, func(o fyne.CanvasObject) bool {
			if b, ok := o.(*widget.ProgressBar); ok {
				bar = b
			}
			return bar != nil
		})
		if bar == nil || bar.Value != 0.4 {
			t.Fatalf("progress bar %v in %q, want 0.4", bar, texts(t, top))
		}
		if row := texts(t, v.rows.Objects[0]); !strings.Contains(row, "Writing the extension") {
			t.Errorf("row while writing: %q", row)
		}
		test.Tap(buttons(t, top)["Cancel"])
		ui.settle()
		if row := texts(t, v.rows.Objects[0]); !strings.Contains(row, "Stopped: no extension was written") {
			t.Errorf("row after cancel: %q", row)
		}
		if len(*opened) != 0 || v.app.win.Canvas().Overlays().Top() != nil {
			t.Errorf("after cancel: opened %v, dialog %v", *opened, v.app.win.Canvas().Overlays().Top())
		}
	})
}
