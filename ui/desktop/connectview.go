package desktop

import (
	"context"
	"net/url"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
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
	// Link is the client's install link and the JSON it carries.
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

// clientActions decides which of a client's buttons apply.
func clientActions(c ClientState) (connectLabel string, canConnect, canDisconnect, canRotate bool) {
	connectLabel = "Connect"
	if c.Connected && !c.Working {
		connectLabel = "Repair"
	}
	return connectLabel, c.Installed && !c.Working, c.Connected, c.Connected
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

// connectView is the Connect tab: each client, its state and its buttons.
type connectView struct {
	app     *App
	conn    Connector
	clients []ClientState
	rows    *fyne.Container
	status  *widget.Label
	busy    bool
}

func newConnectView(app *App, conn Connector) *connectView {
	v := &connectView{app: app, conn: conn, rows: container.NewVBox(), status: widget.NewLabel("")}
	v.status.Wrapping = fyne.TextWrapWord
	return v
}

func (v *connectView) content() fyne.CanvasObject {
	intro := widget.NewLabel("Write Deskhand into your AI clients' settings, each with a token of its own, then check it with a real MCP handshake.")
	intro.Wrapping = fyne.TextWrapWord
	refresh := widget.NewButton("Check again", v.refresh)
	return container.NewBorder(container.NewBorder(nil, nil, nil, refresh, intro), v.status, nil, nil, container.NewVScroll(v.rows))
}

// refresh reads every client back and verifies it, off fyne's goroutine.
func (v *connectView) refresh() {
	if v.conn == nil {
		v.status.SetText("Connecting clients is not available in this build.")
		return
	}
	if v.busy {
		return
	}
	v.busy = true
	v.status.SetText("Checking each client…")
	v.app.background(func(ctx context.Context) func() {
		states := v.conn.Clients(ctx)
		return func() {
			v.busy = false
			v.status.SetText("")
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

func (v *connectView) row(c ClientState) fyne.CanvasObject {
	label, canConnect, canDisconnect, canRotate := clientActions(c)
	connect := widget.NewButton(label, func() { v.confirmConnect(c, false) })
	disconnect := widget.NewButton("Disconnect", func() { v.run(c, "Disconnecting", v.conn.Disconnect) })
	rotate := widget.NewButton("Rotate token", func() { v.confirmConnect(c, true) })
	enable(connect, canConnect)
	enable(disconnect, canDisconnect)
	enable(rotate, canRotate)
	buttons := container.NewHBox(connect, disconnect, rotate)
	if c.HasLink {
		buttons.Add(widget.NewButton("Open in "+c.Name, func() { v.confirmLink(c) }))
	}
	title := widget.NewLabelWithStyle(c.Name+" — "+c.Status, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	// Every row has the same lines, so each client's buttons stay put.
	file := widget.NewLabel(c.File)
	file.Truncation = fyne.TextTruncateEllipsis
	detail := widget.NewLabel(c.Detail)
	detail.Wrapping = fyne.TextWrapWord
	return container.NewVBox(title, file, detail, buttons, widget.NewSeparator())
}

func enable(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

// confirmConnect shows the exact entry before anything is written, as
// the MCP security guidance asks.
func (v *connectView) confirmConnect(c ClientState, rotate bool) {
	preview, err := v.conn.Preview(c.ID)
	if err != nil {
		v.status.SetText(err.Error())
		return
	}
	text := widget.NewLabel(preview)
	text.TextStyle.Monospace = true
	what := "Deskhand will write this into " + c.File + ":"
	if rotate {
		what = "Deskhand will issue " + c.Name + " a new token (the old one stops working at once) and write this into " + c.File + ":"
	}
	body := container.NewVBox(widget.NewLabel(what), text)
	dialog.ShowCustomConfirm("Connect "+c.Name, "Write it", "Cancel", body, func(ok bool) {
		if ok {
			v.run(c, "Connecting", func(ctx context.Context, id string) (ClientState, error) { return v.conn.Connect(ctx, id, rotate) })
		}
	}, v.app.win)
}

// run does one client operation off fyne's goroutine and shows the result.
func (v *connectView) run(c ClientState, doing string, op func(context.Context, string) (ClientState, error)) {
	v.status.SetText(doing + " " + c.Name + "…")
	v.app.background(func(ctx context.Context) func() {
		st, err := op(ctx, c.ID)
		return func() {
			if err != nil {
				v.status.SetText(c.Name + ": " + err.Error())
				return
			}
			v.status.SetText(c.Name + ": " + st.Status + ". " + st.Detail)
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

// confirmLink shows what the install link carries and says what opening
// it exposes before handing it to the OS.
func (v *connectView) confirmLink(c ClientState) {
	v.app.background(func(ctx context.Context) func() {
		link, config, err := v.conn.Link(ctx, c.ID)
		return func() {
			if err != nil {
				v.status.SetText(c.Name + ": " + err.Error())
				return
			}
			u, err := url.Parse(link)
			if err != nil {
				v.status.SetText(c.Name + ": " + err.Error())
				return
			}
			text := widget.NewLabel(maskToken(config))
			text.TextStyle.Monospace = true
			text.Wrapping = fyne.TextWrapBreak
			note := widget.NewLabel("The link holds this client's token, and the system hands it to " + c.Name + " on a command line. Connect writes the file instead and keeps the token off every command line.")
			note.Wrapping = fyne.TextWrapWord
			body := container.NewVBox(widget.NewLabel(c.Name+" will ask you to add this server:"), text, note)
			d := dialog.NewCustomConfirm("Open in "+c.Name, "Open", "Cancel", body, func(ok bool) {
				if ok {
					if err := v.app.fy.OpenURL(u); err != nil {
						v.status.SetText(c.Name + ": cannot open the link: " + err.Error())
					}
				}
			}, v.app.win)
			d.Resize(fyne.NewSize(560, 320))
			d.Show()
		}
	})
}
