package desktop

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/ui/desktop/platform"
)

// Settings keys the desktop edits; the server reads them at start.
var metadataSettings = []struct{ key, label string }{
	{"server.addr", "Address (HOST:PORT; a non-loopback one requires tokens)"},
	{"ollama.host", "Ollama host, for the provider \"ollama\" (empty: OLLAMA_HOST or :11434)"},
	{"server.name", "Server name"},
	{"server.title", "Title"},
	{"server.description", "Description"},
	{"server.instructions", "Instructions for clients"},
	{"server.website", "Website"},
	{"server.allowed_hosts", "Allowed hosts (besides loopback; *.example.com for subdomains)"},
	{"server.allowed_origins", "Allowed origins (e.g. https://app.example.com)"},
	{"server.page_size", "Tools per tools/list page (empty: 1000)"},
}

// settingsCore is what the Settings tab needs of the core: the clients
// and their tokens, the stored settings, and a word with Ollama.
type settingsCore interface {
	Clients() []agent.Client
	CreateClient(ctx context.Context, name string) (agent.Client, string, error)
	RevokeClient(ctx context.Context, name string) error
	RotateClient(ctx context.Context, name string) (agent.Client, string, error)
	Setting(ctx context.Context, key, def string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
	InstalledModels(ctx context.Context) ([]string, error)
}

// settingsView holds the clients and their tokens, and the server's
// settings.
type settingsView struct {
	app      *App
	core     settingsCore
	clients  []agent.Client
	list     *widget.List
	newName  *widget.Entry
	entries  map[string]*widget.Entry
	insecure *widget.Check
	session  *widget.Check
	login    *widget.Check
	ollama   *widget.Label
	status   *widget.Label
	// The OS's login item behind the login box (ui/desktop/platform's;
	// tests put fakes here, so that they leave the real one alone).
	launchesAtLogin  func() (bool, error)
	setLaunchAtLogin func(on bool) error
}

func newSettingsView(app *App, core settingsCore) *settingsView {
	v := &settingsView{app: app, core: core, newName: widget.NewEntry(), entries: make(map[string]*widget.Entry), status: widget.NewLabel(""),
		ollama: widget.NewLabel(""), launchesAtLogin: platform.LaunchesAtLogin, setLaunchAtLogin: platform.SetLaunchAtLogin}
	v.insecure = widget.NewCheck("Open local development: accept requests without a token (INSECURE)", nil)
	v.session = widget.NewCheck("Let each client list and read its own conversations (read-only tools)", nil)
	v.login = widget.NewCheck("Start Deskhand when I log in", nil)
	v.status.Wrapping = fyne.TextWrapWord
	v.newName.SetPlaceHolder("client name, e.g. cursor")
	v.list = widget.NewList(
		func() int { return len(v.clients) },
		func() fyne.CanvasObject {
			return container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewButton("Rotate", nil), widget.NewButton("Revoke", nil)), widget.NewLabel("client"))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			c := v.clients[i]
			row.Objects[0].(*widget.Label).SetText(clientLabel(c, time.Now()))
			buttons := row.Objects[1].(*fyne.Container).Objects
			buttons[0].(*widget.Button).OnTapped = func() { v.rotate(c.Name) }
			buttons[1].(*widget.Button).OnTapped = func() { v.revoke(c.Name) }
		})
	for _, s := range metadataSettings {
		e := widget.NewEntry()
		if s.key == "server.instructions" || s.key == "server.description" {
			e = widget.NewMultiLineEntry()
			e.SetMinRowsVisible(2)
		}
		v.entries[s.key] = e
	}
	return v
}

func (v *settingsView) content() fyne.CanvasObject {
	create := widget.NewButton("Create token", v.create)
	clients := container.NewBorder(
		container.NewVBox(widget.NewLabel("Clients: each has its own token; revoking one shuts it out at once."),
			container.NewBorder(nil, nil, nil, create, v.newName)),
		nil, nil, nil, v.list)
	form := widget.NewForm()
	for _, s := range metadataSettings {
		form.Append(s.label, v.entries[s.key])
	}
	form.Append("", v.insecure)
	form.Append("", v.session)
	save := widget.NewButton("Save settings", v.save)
	check := widget.NewButton("Check Ollama", v.checkOllama)
	where := widget.NewLabel("Data folder: " + v.app.opts.DataDir + "\nEndpoint: " + v.app.opts.ServerURL)
	where.Wrapping = fyne.TextWrapWord
	server := container.NewVBox(widget.NewLabel("Server (applies at the next start)"), form, save, v.status,
		widget.NewSeparator(), container.NewBorder(nil, nil, nil, check, v.ollama), v.login, where)
	split := container.NewVSplit(clients, container.NewVScroll(server))
	split.Offset = 0.4
	return split
}

// refresh re-reads the clients and, off fyne's goroutine, the saved
// settings and whether Deskhand starts at login.
func (v *settingsView) refresh() {
	v.refreshClients()
	keys := []string{"server.insecure_no_auth", "server.session_tools"}
	for _, s := range metadataSettings {
		keys = append(keys, s.key)
	}
	v.app.background(func(ctx context.Context) func() {
		values := make(map[string]string)
		var failed error
		for _, key := range keys {
			val, err := v.core.Setting(ctx, key, "")
			if err != nil {
				failed = err
				continue
			}
			values[key] = val
		}
		atLogin, err := v.launchesAtLogin()
		if err != nil && failed == nil {
			failed = err
		}
		return func() {
			v.insecure.SetChecked(values["server.insecure_no_auth"] == "true")
			v.session.SetChecked(values["server.session_tools"] == "true")
			v.login.OnChanged = nil // showing the state is no change
			v.login.SetChecked(atLogin)
			v.login.OnChanged = v.setLogin
			for _, s := range metadataSettings {
				if val, ok := values[s.key]; ok {
					v.entries[s.key].SetText(val)
				}
			}
			if failed != nil {
				v.status.SetText(agent.UserMessage(failed))
			}
		}
	})
}

// setLogin makes Deskhand start at login or not, off fyne's goroutine.
func (v *settingsView) setLogin(on bool) {
	v.app.background(func(context.Context) func() {
		err := v.setLaunchAtLogin(on)
		if err == nil {
			return nil
		}
		return func() { v.status.SetText(agent.UserMessage(err)) }
	})
}

// refreshClients re-reads the clients only (from memory), keeping unsaved
// edits.
func (v *settingsView) refreshClients() {
	v.clients = v.core.Clients()
	v.list.Refresh()
}

// create makes a client token, off fyne's goroutine, and shows it once.
func (v *settingsView) create() {
	name := v.newName.Text
	v.status.SetText("Creating a token for " + name + "…")
	v.app.background(func(ctx context.Context) func() {
		_, token, err := v.core.CreateClient(ctx, name)
		return func() {
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			if v.newName.Text == name {
				v.newName.SetText("")
			}
			v.status.SetText("")
			v.refreshClients()
			v.showToken(name, token)
		}
	})
}

// showToken shows a new token once, with a button to copy it.
func (v *settingsView) showToken(name, token string) {
	shown := widget.NewEntry()
	shown.SetText(token)
	copyButton := widget.NewButton("Copy", func() { v.app.fy.Clipboard().SetContent(token) })
	body := container.NewVBox(
		widget.NewLabel("The token of "+name+". It is shown only now; Deskhand keeps only its hash."),
		container.NewBorder(nil, nil, nil, copyButton, shown),
		widget.NewLabel("Send it as 'Authorization: Bearer <token>' to "+v.app.opts.ServerURL),
	)
	dialog.ShowCustom("New client token", "Done", body, v.app.win)
}

// revoke shuts a client out, off fyne's goroutine.
func (v *settingsView) revoke(name string) {
	v.app.background(func(ctx context.Context) func() {
		err := v.core.RevokeClient(ctx, name)
		return func() {
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			v.status.SetText("Revoked " + name + ".")
			v.refreshClients()
		}
	})
}

// rotate replaces a client's token, off fyne's goroutine: the old one
// stops working at once and the new one is shown once.
func (v *settingsView) rotate(name string) {
	v.app.background(func(ctx context.Context) func() {
		_, token, err := v.core.RotateClient(ctx, name)
		return func() {
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			v.refreshClients()
			v.status.SetText("Rotated the token of " + name + ": update the client with the new one.")
			v.showToken(name, token)
		}
	})
}

func (v *settingsView) save() {
	if p := addrProblem(v.entries["server.addr"].Text, v.insecure.Checked); p != "" {
		v.status.SetText(p)
		return
	}
	if n := strings.TrimSpace(v.entries["server.page_size"].Text); n != "" {
		if size, err := strconv.Atoi(n); err != nil || size < 1 {
			v.status.SetText("Tools per page must be a whole number above 0 (or empty for 1000).")
			return
		}
	}
	values := map[string]string{"server.insecure_no_auth": fmt.Sprint(v.insecure.Checked), "server.session_tools": fmt.Sprint(v.session.Checked)}
	for _, s := range metadataSettings {
		values[s.key] = strings.TrimSpace(v.entries[s.key].Text)
	}
	v.status.SetText("Saving…")
	v.app.background(func(ctx context.Context) func() {
		for key, value := range values {
			if err := v.core.SetSetting(ctx, key, value); err != nil {
				return func() { v.status.SetText("Not saved: " + agent.UserMessage(err)) }
			}
		}
		return func() { v.status.SetText("Saved. The server uses these settings from its next start.") }
	})
}

// checkOllama asks the provider "ollama" for its models, off fyne's
// goroutine (Settings → Models checks every provider).
func (v *settingsView) checkOllama() {
	v.ollama.SetText("Asking Ollama…")
	v.app.background(func(ctx context.Context) func() {
		names, err := v.core.InstalledModels(ctx)
		return func() {
			if err != nil {
				v.ollama.SetText("✖ " + agent.UserMessage(err))
				return
			}
			v.ollama.SetText("● Ollama (the provider \"ollama\") answers: " + modelsFound(len(names)))
		}
	})
}
