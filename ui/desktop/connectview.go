package desktop

import (
	"context"
	"image/color"
	"net/url"
	"strings"

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
	showDetails
)

// clientMenu is what a client's "⋯" menu offers: copying the entry and
// the details always; the token and the entry's removal once connected;
// the install link only for an installed client that has one.
func clientMenu(c ClientState) []clientAction {
	actions := []clientAction{copyEntry}
	if c.Connected {
		actions = append(actions, rotateToken, disconnectClient)
	}
	if c.HasLink && c.Installed {
		actions = append(actions, openLink)
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
	}
	return "Details…"
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
}

func newConnectView(app *App, conn Connector) *connectView {
	v := &connectView{app: app, conn: conn, rows: container.NewVBox(), status: feedback(), notes: map[string]rowNote{}}
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
	said.Truncation = fyne.TextTruncateEllipsis // in full under Details
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
	d.Resize(fyne.NewSize(560, 320))
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
	d.Resize(fyne.NewSize(560, 320))
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
	d.Resize(fyne.NewSize(520, 240))
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
			d.Resize(fyne.NewSize(560, 320))
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
