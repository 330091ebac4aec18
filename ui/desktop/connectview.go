package desktop

import (
	"context"
	"image/color"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Connector writes Deskhand into MCP clients' configuration and checks
// that it works; main backs it with ui/connect. Its calls verify with a
// real MCP handshake, so they run off fyne's goroutine.
type Connector interface {
	// Clients reads back and verifies every known client.
	Clients(ctx context.Context) []ClientState
	// Connect writes the client's entry with a token of its own (a new one
	// when rotate is set or the entry does not work) and verifies it.
	Connect(ctx context.Context, id string, rotate bool) (ClientState, error)
	// Disconnect removes the entry and revokes the client's token.
	Disconnect(ctx context.Context, id string) (ClientState, error)
	// Preview is the entry as Connect would write it, token left out.
	Preview(id string) (string, error)
	// LinkPreview is the JSON the client's install link would carry, with
	// a placeholder for the token, and whether Link would issue a new
	// token; it mints nothing, so it is what the person agrees to.
	LinkPreview(ctx context.Context, id string) (config string, newToken bool, err error)
	// Link is the client's install link and the JSON it carries. It may
	// issue the client a new token: called only once the person agreed.
	Link(ctx context.Context, id string) (link, config string, err error)
	// Extension writes the Claude Desktop extension (.mcpb) of this
	// program into the data folder and returns its path, and whether it is
	// for a system Claude Desktop runs on (Windows, macOS), where opening
	// it installs it; progress is told, off fyne's goroutine, how much of
	// the program is in it so far. A cancelled ctx stops it and leaves no
	// file.
	Extension(ctx context.Context, progress func(done, total int64)) (path string, installable bool, err error)
}

// ClientState is one client as the Connect tab shows it.
type ClientState struct {
	ID, Name  string
	File      string // its configuration file
	Installed bool
	Connected bool   // our entry is in the file
	Working   bool   // and it passed a real MCP handshake
	Status    string // e.g. "connected, verified (3 tools)"
	Detail    string // what is wrong, or what to do in the client
	HasLink   bool   // the client has an install link (Cursor, VS Code)
	Extension bool   // the client installs Deskhand as an extension too (Claude Desktop)
}

// clientChip is a client's state in a word, and its colour.
func clientChip(c ClientState) (string, widget.Importance) {
	switch {
	case c.Working:
		return "Connected", widget.SuccessImportance
	case c.Connected:
		return "Needs repair", widget.WarningImportance
	case c.Installed:
		return "Not connected", widget.MediumImportance
	}
	return "Not installed", widget.LowImportance
}

// primaryAction is the one button a client's row offers: Connect, Repair,
// or none (it works, or the client is not installed).
func primaryAction(c ClientState) string {
	switch {
	case !c.Installed || c.Working:
		return ""
	case c.Connected:
		return "Repair"
	}
	return "Connect"
}

// clientAction is one entry of a client's "⋯" menu.
type clientAction int

const (
	copyEntry clientAction = iota
	rotateToken
	disconnectClient
	openLink
	installExtension
	showDetails
)

// clientMenu is what a client's "⋯" menu offers: copying the entry and
// the details always; the token and the entry's removal once connected;
// the install link only for an installed client that has one; the
// extension for the client that takes one, installed here or not (it is
// a file to carry to another computer too).
func clientMenu(c ClientState) []clientAction {
	actions := []clientAction{copyEntry}
	if c.Connected {
		actions = append(actions, rotateToken, disconnectClient)
	}
	if c.HasLink && c.Installed {
		actions = append(actions, openLink)
	}
	if c.Extension {
		actions = append(actions, installExtension)
	}
	return append(actions, showDetails)
}

func (a clientAction) label(c ClientState) string {
	switch a {
	case copyEntry:
		return "Copy the entry…"
	case rotateToken:
		return "Rotate token…"
	case disconnectClient:
		return "Disconnect…"
	case openLink:
		return "Open in " + c.Name + "…"
	case installExtension:
		return "Install as a " + c.Name + " extension…"
	}
	return "Details…"
}

// extensionDone says what happens to the extension written at path: a
// note for the client's row, the text of the dialog that follows, and
// whether to hand the file to the system, which opens it in Claude
// Desktop. installable: the extension is for a system Claude Desktop runs
// on (this one); configEntry: Claude Desktop's config file has Deskhand's
// entry too.
func extensionDone(installable bool, path string, configEntry bool) (note, text string, open bool) {
	if !installable {
		return "Saved the extension: " + path,
			"Deskhand saved its Claude Desktop extension as " + path + ".\n\n" +
				"Claude Desktop runs on Windows and macOS, not on this system, and this extension carries the program for this system: it is useful only to check. " +
				"On a Windows PC or a Mac, install Deskhand and choose this menu item there.", false
	}
	text = "Deskhand saved its Claude Desktop extension as " + path + " and opened it: Claude Desktop asks whether to install Deskhand. " +
		"If it does not ask, open Claude Desktop's Settings, Extensions, Advanced settings, Install Extension…, and choose that file.\n\n" +
		"The extension runs this Deskhand program, which takes Claude Desktop's own token from the system keychain: the file holds no token."
	if configEntry {
		text += "\n\nClaude Desktop also has Deskhand in its config file: once the extension is installed, choose Disconnect… in this menu, or Claude Desktop starts Deskhand twice."
	}
	return "Opened the extension: Claude Desktop asks to install it.", text, true
}

// fileURL is the file: URL of a local path, for the system to open.
func fileURL(path string) *url.URL {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/Users/…
	}
	return &url.URL{Scheme: "file", Path: p}
}

// copyNote says what a copied entry holds, and what to do with it.
func copyNote(c ClientState, entry string) string {
	if strings.Contains(entry, "<a new token") {
		return "The entry is copied without a token: copying issues none. Paste it into " + c.Name +
			"'s settings and put a token in place of <a new token…> (create one in Settings, under Client tokens). " +
			"Or let Deskhand do it all: Connect writes the entry with a token of its own and checks it."
	}
	return "This entry starts Deskhand, which reads " + c.Name + "'s token from the system keychain: " +
		"Connect puts a token there and writes the entry."
}

// linkNote says what opening a client's install link hands over.
func linkNote(c ClientState, newToken bool) string {
	token := "the token " + c.Name + "'s settings hold now"
	if newToken {
		token = "a new token, issued when you press Open"
	}
	return "The link carries " + token + ", and the system hands it to " + c.Name + " on a command line. " +
		"Connect writes the file instead and keeps the token off every command line."
}

// maskToken hides bearer tokens in text shown on screen.
func maskToken(s string) string {
	const prefix = "Bearer dh_"
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i] + "Bearer dh_…")
		s = s[i+len(prefix):]
		end := strings.IndexFunc(s, func(r rune) bool {
			return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		})
		if end < 0 {
			return b.String()
		}
		s = s[end:]
	}
}

// rowNote is the last thing said about a client, in its row.
type rowNote struct {
	text   string
	failed bool
}

// connectView is the Connect tab: one compact row per client, with its
// state, one primary action and the rest in a "⋯" menu.
type connectView struct {
	app     *App
	conn    Connector
	clients []ClientState
	notes   map[string]rowNote // by client ID, until the next check
	rows    *fyne.Container
	status  *widget.Label
	busy    bool
	writing bool                 // the extension is being written
	open    func(*url.URL) error // hands a file to the system (fyne's OpenURL)
}

func newConnectView(app *App, conn Connector) *connectView {
	v := &connectView{app: app, conn: conn, rows: container.NewVBox(), status: feedback(), notes: map[string]rowNote{},
		open: app.fy.OpenURL}
	return v
}

func (v *connectView) content() fyne.CanvasObject {
	intro := widget.NewLabel("Connect writes Deskhand into an AI client's settings, with a token of its own, and checks that the client can use your agents.")
	intro.Wrapping = fyne.TextWrapWord
	refresh := widget.NewButton("Check again", v.refresh)
	return container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, nil, refresh, intro), v.status), nil, nil, nil,
		container.NewVScroll(v.rows))
}

// refresh reads every client back and verifies it, off fyne's goroutine.
func (v *connectView) refresh() {
	if v.conn == nil {
		say(v.status, "Connecting clients is not available in this build.")
		return
	}
	if v.busy {
		return
	}
	v.busy = true
	say(v.status, "Checking each client…")
	v.app.background(func(ctx context.Context) func() {
		states := v.conn.Clients(ctx)
		return func() {
			v.busy = false
			say(v.status, "")
			clear(v.notes)
			v.show(states)
		}
	})
}

// show rebuilds the rows; on fyne's goroutine.
func (v *connectView) show(states []ClientState) {
	v.clients = states
	v.rows.RemoveAll()
	for _, c := range states {
		v.rows.Add(v.row(c))
	}
	v.rows.Refresh()
}

// atLeastWide keeps o at least w wide, so that the rows' columns line up.
func atLeastWide(w float32, o fyne.CanvasObject) fyne.CanvasObject {
	r := canvas.NewRectangle(color.Transparent)
	r.SetMinSize(fyne.NewSize(w, 0))
	return container.NewStack(r, o)
}

// row is one line: name, state chip, the latest word about it, the
// primary action and the "⋯" menu.
func (v *connectView) row(c ClientState) fyne.CanvasObject {
	name := widget.NewLabelWithStyle(c.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	word, importance := clientChip(c)
	chip := widget.NewLabelWithStyle(word, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	chip.Importance = importance
	said := widget.NewLabel(c.Status)
	if strings.EqualFold(c.Status, word) {
		said.SetText("") // the chip says it
	}
	said.Importance = widget.LowImportance
	if n, ok := v.notes[c.ID]; ok {
		said.SetText(n.text)
		if n.failed {
			said.Importance = widget.DangerImportance
		}
	}
	said.Wrapping = fyne.TextWrapWord // a result is read whole
	actions := container.NewHBox()
	if label := primaryAction(c); label != "" {
		primary := widget.NewButton(label, func() { v.confirmConnect(c, false) })
		primary.Importance = widget.HighImportance
		actions.Add(primary)
	}
	var more *widget.Button
	more = widget.NewButtonWithIcon("", theme.MoreHorizontalIcon(), func() {
		widget.ShowPopUpMenuAtRelativePosition(v.menu(c), v.app.win.Canvas(), fyne.NewPos(0, more.Size().Height), more)
	})
	actions.Add(more)
	return container.NewBorder(nil, nil, container.NewHBox(atLeastWide(150, name), atLeastWide(120, chip)), actions, said)
}

// menu is a client's "⋯" menu.
func (v *connectView) menu(c ClientState) *fyne.Menu {
	var items []*fyne.MenuItem
	for _, a := range clientMenu(c) {
		items = append(items, fyne.NewMenuItem(a.label(c), func() { v.do(c, a) }))
	}
	return fyne.NewMenu(c.Name, items...)
}

func (v *connectView) do(c ClientState, a clientAction) {
	switch a {
	case copyEntry:
		v.confirmCopy(c)
	case rotateToken:
		v.confirmConnect(c, true)
	case disconnectClient:
		v.confirmDisconnect(c)
	case openLink:
		v.confirmLink(c)
	case installExtension:
		v.writeExtension(c)
	case showDetails:
		v.details(c)
	}
}

// note says something about a client in its row; on fyne's goroutine.
func (v *connectView) note(id, text string, failed bool) {
	v.notes[id] = rowNote{text, failed}
	for i, c := range v.clients {
		if c.ID == id {
			v.rows.Objects[i] = v.row(c)
		}
	}
	v.rows.Refresh()
}

// monoText is text shown as it is written into a file.
func monoText(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.TextStyle.Monospace = true
	l.Wrapping = fyne.TextWrapBreak
	return l
}

func plainNote(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// confirmConnect shows the exact entry before anything is written, as
// the MCP security guidance asks; the button names what happens.
func (v *connectView) confirmConnect(c ClientState, rotate bool) {
	preview, err := v.conn.Preview(c.ID)
	if err != nil {
		v.note(c.ID, "✖ "+err.Error(), true)
		return
	}
	action, title := primaryAction(c), primaryAction(c)+" "+c.Name
	what := "Deskhand will write this into " + c.File + ", with a token of its own in place of the one shown, and then check that it works:"
	if rotate {
		action, title = "Rotate token", "Rotate the token of "+c.Name
		what = "Deskhand will issue " + c.Name + " a new token (the old one stops working at once) and write this into " + c.File + ":"
	}
	body := container.NewVBox(plainNote(what), monoText(preview))
	d := dialog.NewCustomConfirm(title, action, "Cancel", body, func(ok bool) {
		if ok {
			v.run(c, func(ctx context.Context, id string) (ClientState, error) { return v.conn.Connect(ctx, id, rotate) })
		}
	}, v.app.win)
	d.Resize(fyne.NewSize(560, 0)) // as wide as that, as tall as its content
	v.app.showDialog(d, nil)
}

// confirmDisconnect asks before removing the entry and its token.
func (v *connectView) confirmDisconnect(c ClientState) {
	body := plainNote("Deskhand will remove its entry from " + c.File + " and revoke " + c.Name + "'s token: " + c.Name + " can no longer use your agents until you connect it again.")
	v.app.showDialog(dialog.NewCustomConfirm("Disconnect "+c.Name, "Disconnect", "Cancel", body, func(ok bool) {
		if ok {
			v.run(c, v.conn.Disconnect)
		}
	}, v.app.win), nil)
}

// confirmCopy shows the entry and copies it, without a token: a token on
// the clipboard is readable by every program, and minting one for a
// client Deskhand cannot check would leave a token nobody uses.
func (v *connectView) confirmCopy(c ClientState) {
	entry, err := v.conn.Preview(c.ID)
	if err != nil {
		v.note(c.ID, "✖ "+err.Error(), true)
		return
	}
	body := container.NewVBox(monoText(entry), plainNote(copyNote(c, entry)))
	d := dialog.NewCustomConfirm("Copy the entry for "+c.Name, "Copy", "Cancel", body, func(ok bool) {
		if ok {
			v.app.fy.Clipboard().SetContent(entry)
			v.note(c.ID, "Copied the entry, without a token.", false)
		}
	}, v.app.win)
	d.Resize(fyne.NewSize(560, 0)) // as wide as that, as tall as its content
	v.app.showDialog(d, nil)
}

// details shows what the row leaves out: the file and the whole state.
func (v *connectView) details(c ClientState) {
	lines := []string{"Settings file: " + c.File, "State: " + c.Status}
	if c.Detail != "" {
		lines = append(lines, c.Detail)
	}
	if n, ok := v.notes[c.ID]; ok && n.text != c.Status {
		lines = append(lines, "Last: "+n.text)
	}
	d := dialog.NewCustom(c.Name, "Close", plainNote(strings.Join(lines, "\n")), v.app.win)
	d.Resize(fyne.NewSize(520, 0))
	v.app.showDialog(d, nil)
}

// run does one client operation off fyne's goroutine and says the result
// in the client's row.
func (v *connectView) run(c ClientState, op func(context.Context, string) (ClientState, error)) {
	v.note(c.ID, "Working…", false)
	v.app.background(func(ctx context.Context) func() {
		st, err := op(ctx, c.ID)
		return func() {
			if err != nil {
				v.note(c.ID, "✖ "+err.Error(), true)
				return
			}
			v.notes[st.ID] = rowNote{text: strings.TrimSuffix(st.Status+". "+st.Detail, " ")}
			v.replace(st)
		}
	})
}

// replace puts one client's new state in its row.
func (v *connectView) replace(st ClientState) {
	for i, c := range v.clients {
		if c.ID == st.ID {
			v.clients[i] = st
			v.rows.Objects[i] = v.row(st)
		}
	}
	v.rows.Refresh()
}

// confirmLink shows what the install link will carry, built without
// minting a token, and says what opening it exposes; the token is issued
// (when one is needed) only once the person presses Open.
func (v *connectView) confirmLink(c ClientState) {
	v.app.background(func(ctx context.Context) func() {
		config, newToken, err := v.conn.LinkPreview(ctx, c.ID)
		return func() {
			if err != nil {
				v.note(c.ID, "✖ "+err.Error(), true)
				return
			}
			body := container.NewVBox(plainNote(c.Name+" will ask you to add this server:"), monoText(maskToken(config)), plainNote(linkNote(c, newToken)))
			d := dialog.NewCustomConfirm("Open in "+c.Name, "Open", "Cancel", body, func(ok bool) {
				if ok {
					v.openLink(c)
				}
			}, v.app.win)
			d.Resize(fyne.NewSize(560, 0)) // as wide as that, as tall as its content
			v.app.showDialog(d, nil)
		}
	})
}

// openLink gets the link (minting a token when the entry needs one) off
// fyne's goroutine and hands it to the system.
func (v *connectView) openLink(c ClientState) {
	v.note(c.ID, "Opening "+c.Name+"…", false)
	v.app.background(func(ctx context.Context) func() {
		link, _, err := v.conn.Link(ctx, c.ID)
		return func() {
			var u *url.URL
			if err == nil {
				u, err = url.Parse(link)
			}
			if err == nil {
				err = v.app.fy.OpenURL(u)
			}
			if err != nil {
				v.note(c.ID, "✖ cannot open the link: "+err.Error(), true)
				return
			}
			v.note(c.ID, "Opened the link: "+c.Name+" asks you to add the server.", false)
		}
	})
}

// writeExtension writes the Claude Desktop extension of this program off
// fyne's goroutine (it carries the whole program: seconds), with its
// progress in a dialog whose Cancel stops it, then hands the file to the
// system, which opens it in Claude Desktop, and says what happens next.
func (v *connectView) writeExtension(c ClientState) {
	if v.writing {
		return
	}
	v.writing = true
	ctx, cancel := context.WithCancel(v.app.ctx)
	bar := widget.NewProgressBar()
	body := container.NewVBox(plainNote("Deskhand is writing its "+c.Name+" extension: this program and a manifest, in one file in its data folder."), bar)
	d := dialog.NewCustom(c.Name+" extension", "Cancel", body, v.app.win)
	d.Resize(fyne.NewSize(480, 0))
	v.app.showDialog(d, cancel)
	v.note(c.ID, "Writing the extension…", false)
	var shown atomic.Int64 // the percentage on screen
	shown.Store(-1)
	progress := func(done, total int64) {
		if total <= 0 {
			return
		}
		if pct := done * 100 / total; shown.Swap(pct) != pct {
			v.app.onUI(func() { bar.SetValue(float64(pct) / 100) })
		}
	}
	v.app.background(func(context.Context) func() {
		path, installable, err := v.conn.Extension(ctx, progress)
		return func() {
			cancelled := ctx.Err() != nil
			v.writing = false
			d.Hide()
			cancel()
			switch {
			case cancelled:
				v.note(c.ID, "Stopped: no extension was written.", false)
				return
			case err != nil:
				v.note(c.ID, "✖ "+err.Error(), true)
				return
			}
			note, text, open := extensionDone(installable, path, c.Connected)
			if open {
				if err := v.open(fileURL(path)); err != nil {
					note = "✖ Saved the extension, but could not open it: " + err.Error()
					text = "Deskhand saved its " + c.Name + " extension as " + path + ", but the system could not open it (" + err.Error() + "). " +
						"Open it yourself: double-click it, or in " + c.Name + " open Settings, Extensions, Advanced settings, Install Extension…, and choose that file."
				}
			}
			v.note(c.ID, note, strings.HasPrefix(note, "✖"))
			done := dialog.NewCustom(c.Name+" extension", "Close", plainNote(text), v.app.win)
			done.Resize(fyne.NewSize(520, 0))
			v.app.showDialog(done, nil)
		}
	})
}

// rowButtons are a list row's buttons at their own height, centred on a
// row that may be taller (a second line of text), not stretched to it.
func rowButtons(buttons ...fyne.CanvasObject) fyne.CanvasObject {
	return container.NewCenter(container.NewHBox(buttons...))
}
