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

// advancedSetting is a field under Settings → Advanced. The server reads
// all of them when it starts (main.go, serve.go), so each applies at the
// next start.
type advancedSetting struct {
	key, label, placeholder string
	multiline               bool
}

// advancedGroups are the Advanced settings, in the order shown.
var advancedGroups = []struct {
	title    string
	settings []advancedSetting
}{
	{"Where Deskhand serves", []advancedSetting{
		{"server.addr", "Address", "empty: " + defaultInEffect["server.addr"] + " (HOST:PORT)", false},
	}},
	{"Ollama", []advancedSetting{
		{"ollama.host", "Ollama's address", "empty: OLLAMA_HOST, or " + defaultInEffect["ollama.host"], false},
	}},
	{"Who may call", []advancedSetting{
		{"server.allowed_hosts", "Allowed hosts", "besides this computer; *.example.com for subdomains", false},
		{"server.allowed_origins", "Allowed origins", "e.g. https://app.example.com", false},
	}},
	{"Tools", []advancedSetting{
		{"server.page_size", "Tools per page", "empty: 1000", false},
	}},
	{"Teams", []advancedSetting{
		{agent.SettingTeamMaxDepth, "Depth of hand-offs", fmt.Sprintf("empty: %d", agent.DefaultTeamMaxDepth), false},
	}},
	{"Activity log", []advancedSetting{
		{agent.SettingLogMaxAge, "Keep requests for", fmt.Sprintf("empty: %dd (days, like 30d, or hours, like 720h)", int(agent.DefaultLogMaxAge.Hours()/24)), false},
		{agent.SettingLogMaxMB, "At most (MB)", fmt.Sprintf("empty: %d", agent.DefaultLogMaxMB), false},
	}},
	{"What clients are told about this server", []advancedSetting{
		{"server.name", "Name", "empty: deskhand", false},
		{"server.title", "Title", "empty: Deskhand", false},
		{"server.description", "Description", "", true},
		{"server.instructions", "Instructions", "", true},
		{"server.website", "Website", "", false},
	}},
}

// defaultInEffect is what the server uses for a setting nobody set (as
// main.go's defaults), so that a default in effect is not taken for an
// override.
var defaultInEffect = map[string]string{
	"server.addr":             "127.0.0.1:7345",
	"ollama.host":             "http://127.0.0.1:11434",
	"server.insecure_no_auth": "false",
	agent.SettingLogEnabled:   "true",
}

// effectNote says which value of a setting this run uses when it is not
// the stored one: set by a flag or the environment, or saved since the
// start (changedHere). "" when they agree or nothing is known.
func effectNote(key, stored, now string, known, changedHere bool) string {
	if !known {
		return ""
	}
	shown := now
	switch key {
	case "server.insecure_no_auth": // off unless "true"
		stored = fmt.Sprint(stored == "true")
		shown = map[string]string{"true": "on", "false": "off"}[now]
	case agent.SettingLogEnabled: // on unless "false"
		stored = fmt.Sprint(stored != "false")
		shown = map[string]string{"true": "on", "false": "off"}[now]
	}
	if stored == now || stored == "" && now == defaultInEffect[key] {
		return ""
	}
	if changedHere {
		return "In effect now: " + shown + " (what you saved applies from the next start)."
	}
	return "In effect now: " + shown + " (set by a flag or the environment)."
}

// fieldNote is the line under an Advanced field: what is wrong with it,
// else the value in effect and when a change applies.
func fieldNote(problem, effect string) (note string, wrong bool) {
	if problem != "" {
		return problem, true
	}
	return strings.TrimSpace(effect + " Applies at the next start."), false
}

// logAgeProblem checks how long the activity log keeps requests: "" when
// fine.
func logAgeProblem(text string) string {
	if s := strings.TrimSpace(text); s != "" {
		if _, err := agent.ParseLogAge(s); err != nil {
			return fmt.Sprintf("Write an age such as 30d (days) or 720h (hours), or leave it empty for %d days.", int(agent.DefaultLogMaxAge.Hours()/24))
		}
	}
	return ""
}

// logSizeProblem checks the activity log's size limit: "" when fine.
func logSizeProblem(text string) string {
	if s := strings.TrimSpace(text); s != "" {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			return fmt.Sprintf("Write a whole number of megabytes above 0, or leave it empty for %d.", agent.DefaultLogMaxMB)
		}
	}
	return ""
}

// The lines under the log's limits when they are fine: the core reads
// them each time it prunes the log, every 10 minutes.
const (
	logAgeNote  = "Deskhand deletes older requests every 10 minutes: a change applies within 10 minutes."
	logSizeNote = "Past this size, the oldest requests go first. Applies within 10 minutes."
)

// advancedProblems are the checks of the Advanced fields typed in, by
// key (the address's depends on the insecure box too).
var advancedProblems = map[string]func(string) string{
	"server.page_size":        pageSizeProblem,
	agent.SettingLogMaxAge:    logAgeProblem,
	agent.SettingLogMaxMB:     logSizeProblem,
	agent.SettingTeamMaxDepth: teamDepthProblem,
}

// teamDepthProblem checks how deep teams may go: "" when fine.
func teamDepthProblem(text string) string {
	if s := strings.TrimSpace(text); s != "" {
		if n, err := strconv.Atoi(s); err != nil || n < 1 {
			return fmt.Sprintf("Write a whole number of at least 1, or leave it empty for %d.", agent.DefaultTeamMaxDepth)
		}
	}
	return ""
}

// teamDepthNote is the line under the team depth when it is fine: the
// core reads it at each call of a member.
const teamDepthNote = "The agent a client calls counts as 1; deeper calls get an error. Applies at once."

// pageSizeProblem checks the tools-per-page setting: "" when fine.
func pageSizeProblem(text string) string {
	if n := strings.TrimSpace(text); n != "" {
		if size, err := strconv.Atoi(n); err != nil || size < 1 {
			return "Tools per page must be a whole number above 0 (or empty for 1000)."
		}
	}
	return ""
}

// modelServersSummary is the model servers in a sentence, for Settings.
func modelServersSummary(ps []agent.ProviderStatus) string {
	if len(ps) == 0 {
		return "No model server yet: add one (Ollama, LM Studio, an OpenAI-compatible server, OpenAI or Anthropic) so that your agents have a model to run on."
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return countOf(len(ps), "model server") + ": " + strings.Join(names, ", ") + ". Your agents run on their models; changes there apply at once."
}

// settingsView is Settings → General: everyday settings first (model
// servers, start at login, client tokens), then Advanced, collapsed.
// Each section says what happened next to its own controls.
type settingsView struct {
	app  *App
	core Core

	servers *widget.Label // the model servers in a sentence

	login       *widget.Check
	loginStatus *widget.Label

	clients     []agent.Client
	newName     *widget.Entry
	clientRows  *fyne.Container
	clientLines map[string]*widget.Label // each client's second line, by ID
	calls       map[string]int           // tool calls today, by client ID; nil until read
	callsAsked  int                      // reads of the calls asked for; only the last one's answer is shown
	now         func() time.Time
	tokenStatus *widget.Label

	advanced       *widget.Accordion
	entries        map[string]*widget.Entry
	notes          map[string]*widget.Label // under each Advanced field, by key
	insecure       *widget.Check
	session        *widget.Check
	logOn          *widget.Check     // keep an activity log (log.enabled)
	atStart        map[string]string // the first values read, for the settings in effect since (log.enabled)
	advancedStatus *widget.Label
	stored         map[string]string // the Advanced values as last read or saved
	savedHere      map[string]bool   // keys saved since this run started
	// The OS's login item behind the login box (ui/desktop/platform's;
	// tests put fakes here, so that they leave the real one alone).
	launchesAtLogin  func() (bool, error)
	setLaunchAtLogin func(on bool) error
}

func newSettingsView(app *App, core Core) *settingsView {
	v := &settingsView{app: app, core: core, newName: widget.NewEntry(), clientRows: container.NewVBox(), now: time.Now,
		entries: map[string]*widget.Entry{}, notes: map[string]*widget.Label{}, stored: map[string]string{}, savedHere: map[string]bool{},
		servers: plainNote(""), loginStatus: feedback(), tokenStatus: feedback(), advancedStatus: feedback(),
		launchesAtLogin: platform.LaunchesAtLogin, setLaunchAtLogin: platform.SetLaunchAtLogin}
	v.login = widget.NewCheck("Start Deskhand when I log in", nil)
	v.insecure = widget.NewCheck("Open local development: accept requests without a token (INSECURE)", func(bool) { v.checkField("server.addr") })
	v.session = widget.NewCheck("Let each client list and read its own conversations (read-only tools)", nil)
	v.logOn = widget.NewCheck("Keep a log of every request clients make (Log tab)", nil)
	v.atStart = map[string]string{}
	v.newName.SetPlaceHolder("the client's name, e.g. cursor")
	v.newName.OnSubmitted = func(string) { v.create() }
	for _, g := range advancedGroups {
		for _, s := range g.settings {
			e := widget.NewEntry()
			if s.multiline {
				e = widget.NewMultiLineEntry()
				e.SetMinRowsVisible(2)
				e.Wrapping = fyne.TextWrapWord
			}
			e.SetPlaceHolder(s.placeholder)
			key := s.key
			e.OnChanged = func(string) { v.checkField(key) }
			v.entries[key] = e
			v.notes[key] = plainNote("")
		}
	}
	v.notes["server.insecure_no_auth"] = plainNote("")
	v.notes["server.session_tools"] = plainNote("")
	v.notes[agent.SettingLogEnabled] = plainNote("")
	for key := range v.notes {
		v.checkField(key)
	}
	return v
}

// say puts text in a feedback line, which takes no room while empty.
// feedback is an empty feedback line.
func feedback() *widget.Label {
	l := plainNote("")
	l.Hide()
	return l
}

func say(l *widget.Label, text string) {
	l.SetText(text)
	l.Hidden = text == ""
	l.Refresh()
}

// settingsHeading is a section's title.
func settingsHeading(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

func (v *settingsView) content() fyne.CanvasObject {
	// Each server's address is in one place: its own settings.
	manage := widget.NewButton("Manage model servers…", v.showModels)
	servers := container.NewVBox(settingsHeading("Model servers"),
		container.NewBorder(nil, nil, nil, manage, v.servers))

	login := container.NewVBox(settingsHeading("Start at login"), v.login,
		plainNote("Deskhand starts in the tray when you log in to this computer. Applies at once."), v.loginStatus)

	create := widget.NewButton("Create token", v.create)
	tokens := container.NewVBox(settingsHeading("Client tokens"),
		plainNote("Each client that calls Deskhand sends a token of its own (Connect makes them for the clients it knows). "+
			"Creating, rotating or revoking a token applies at once."),
		container.NewBorder(nil, nil, nil, create, v.newName), v.tokenStatus, v.clientRows)

	v.advanced = widget.NewAccordion(widget.NewAccordionItem("Advanced", v.advancedContent()))
	page := container.NewVBox(servers, widget.NewSeparator(), login, widget.NewSeparator(), tokens,
		widget.NewSeparator(), v.advanced)
	if p := v.app.opts.KeychainProblem; p != "" {
		page.Objects = append([]fyne.CanvasObject{settingsHeading("Secrets"), plainNote(v.app.keptNote("")), widget.NewSeparator()}, page.Objects...)
	}
	return container.NewVScroll(page)
}

// advancedContent is what Advanced holds: the server's settings, which
// apply at its next start, and where its data is.
func (v *settingsView) advancedContent() fyne.CanvasObject {
	box := container.NewVBox(plainNote("The server reads these when Deskhand starts: a change applies at the next start (the activity log's limits within 10 minutes, the team depth at once). Data folder: " +
		v.app.opts.DataDir + ". Endpoint: " + v.app.opts.ServerURL + "."))
	// One form, so that the fields line up; each group under its title.
	form := widget.NewForm()
	for _, g := range advancedGroups {
		form.Append("", settingsHeading(g.title))
		if g.title == "Activity log" {
			form.Append("", container.NewVBox(v.logOn, v.notes[agent.SettingLogEnabled]))
		}
		for _, s := range g.settings {
			form.Append(s.label, container.NewVBox(v.entries[s.key], v.notes[s.key]))
		}
		switch g.title {
		case "Where Deskhand serves":
			form.Append("", container.NewVBox(v.insecure, v.notes["server.insecure_no_auth"]))
		case "Tools":
			form.Append("", container.NewVBox(v.session, v.notes["server.session_tools"]))
		}
	}
	box.Add(form)
	save := widget.NewButton("Save advanced settings", v.save)
	save.Importance = widget.HighImportance
	box.Add(container.NewBorder(nil, nil, save, nil, v.advancedStatus))
	return box
}

// showModels opens Settings → Models.
func (v *settingsView) showModels() {
	if v.app.tabs == nil {
		return
	}
	v.app.showModelsSettings()
}

// showProviders puts the model servers in the summary (Settings → Models
// tells, each time it reads them).
func (v *settingsView) showProviders(ps []agent.ProviderStatus) {
	v.servers.SetText(modelServersSummary(ps))
}

// checkField updates the line under one Advanced field.
func (v *settingsView) checkField(key string) {
	label := v.notes[key]
	if label == nil {
		return
	}
	var problem string
	switch key {
	case "server.addr":
		if v.insecure != nil {
			problem = addrProblem(v.entries[key].Text, v.insecure.Checked)
		}
	default:
		if check := advancedProblems[key]; check != nil {
			problem = check(v.entries[key].Text)
		}
	}
	now, known := v.app.opts.InEffect[key]
	changedHere := v.savedHere[key]
	if key == agent.SettingLogEnabled { // no flag sets it: what was read first is in effect
		at, read := v.atStart[key]
		now, known, changedHere = fmt.Sprint(at != "false"), read, true
	}
	note, wrong := fieldNote(problem, effectNote(key, v.stored[key], now, known, changedHere))
	if !wrong && key == agent.SettingLogMaxAge {
		note = logAgeNote
	}
	if !wrong && key == agent.SettingLogMaxMB {
		note = logSizeNote
	}
	if !wrong && key == agent.SettingTeamMaxDepth {
		note = teamDepthNote
	}
	if wrong {
		label.Importance = widget.DangerImportance
		note = "✖ " + note
	} else {
		label.Importance = widget.LowImportance
	}
	say(label, note)
}

// settingKeys are every key Settings reads and saves.
func settingKeys() []string {
	keys := []string{"server.insecure_no_auth", "server.session_tools", agent.SettingLogEnabled}
	for _, g := range advancedGroups {
		for _, s := range g.settings {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// refresh re-reads the clients and, off fyne's goroutine, the saved
// settings and whether Deskhand starts at login.
func (v *settingsView) refresh() {
	v.refreshClients()
	keys := settingKeys()
	v.app.background(func(ctx context.Context) func() {
		values := make(map[string]string)
		var failed error
		for _, key := range keys {
			val, err := v.core.Settings.Get(ctx, key, "")
			if err != nil {
				failed = err
				continue
			}
			values[key] = val
		}
		atLogin, loginErr := v.launchesAtLogin()
		return func() {
			v.login.OnChanged = nil // showing the state is no change
			v.login.SetChecked(atLogin)
			v.login.OnChanged = v.setLogin
			if loginErr != nil {
				say(v.loginStatus, "✖ "+agent.UserMessage(loginErr))
			}
			for key, val := range values {
				v.stored[key] = val
				if e, ok := v.entries[key]; ok {
					e.SetText(val)
				}
			}
			v.insecure.SetChecked(values["server.insecure_no_auth"] == "true")
			v.session.SetChecked(values["server.session_tools"] == "true")
			if val, ok := values[agent.SettingLogEnabled]; ok {
				if _, seen := v.atStart[agent.SettingLogEnabled]; !seen {
					v.atStart[agent.SettingLogEnabled] = val // what this run started with
				}
				v.logOn.SetChecked(val != "false")
			}
			for key := range v.notes {
				v.checkField(key)
			}
			if failed != nil {
				say(v.advancedStatus, "✖ Some settings could not be read: "+agent.UserMessage(failed))
			}
		}
	})
}

// setLogin makes Deskhand start at login or not, off fyne's goroutine.
func (v *settingsView) setLogin(on bool) {
	say(v.loginStatus, "")
	v.app.background(func(context.Context) func() {
		err := v.setLaunchAtLogin(on)
		return func() {
			switch {
			case err != nil:
				say(v.loginStatus, "✖ "+agent.UserMessage(err))
			case on:
				say(v.loginStatus, "Deskhand starts when you log in.")
			default:
				say(v.loginStatus, "Deskhand no longer starts when you log in.")
			}
		}
	})
}

// refreshClients re-reads the clients (from memory), keeping unsaved
// edits, then their calls today (refreshCalls).
func (v *settingsView) refreshClients() {
	v.clients = v.core.Clients.List()
	v.clientRows.RemoveAll()
	v.clientLines = make(map[string]*widget.Label, len(v.clients))
	for _, c := range v.clients {
		label := widget.NewLabel(c.Name + " · sees " + v.clientAgents(c.Name))
		label.Truncation = fyne.TextTruncateEllipsis
		line := widget.NewLabel("")
		line.Truncation, line.Importance = fyne.TextTruncateEllipsis, widget.LowImportance
		v.clientLines[c.ID] = line
		agents := widget.NewButton("Agents…", func() { v.chooseAgents(c.Name) })
		rotate := widget.NewButton("Rotate…", func() { v.confirmRotate(c.Name) })
		revoke := widget.NewButton("Revoke…", func() { v.confirmRevoke(c.Name) })
		v.clientRows.Add(container.NewBorder(nil, nil, nil, rowButtons(agents, rotate, revoke), container.NewVBox(label, line)))
	}
	v.showCalls()
	v.refreshCalls()
	if len(v.clients) == 0 {
		none := widget.NewLabel("No client token yet.")
		none.Importance = widget.LowImportance
		v.clientRows.Add(none)
	}
	v.clientRows.Refresh()
}

// refreshCalls reads how many tools each client called today, off
// fyne's goroutine (the activity log is in the database), and shows it.
func (v *settingsView) refreshCalls() {
	v.callsAsked++
	asked := v.callsAsked
	since := startOfDay(v.now())
	v.app.background(func(ctx context.Context) func() {
		calls, err := v.core.Clients.Calls(ctx, since)
		return func() {
			if asked != v.callsAsked {
				return // a later read answers
			}
			if err != nil {
				v.app.log.Warn("count the calls of clients", "err", err)
				calls = nil // not known: not said
			} else if calls == nil {
				calls = map[string]int{} // no log: none
			}
			v.calls = calls
			v.showCalls()
		}
	})
}

// showCalls puts each client's second line: created, last seen, calls
// today (once known).
func (v *settingsView) showCalls() {
	now := v.now()
	for _, c := range v.clients {
		calls := -1
		if v.calls != nil {
			calls = v.calls[c.ID]
		}
		if line := v.clientLines[c.ID]; line != nil {
			line.SetText(clientLabel(c, calls, now))
		}
	}
}

// create makes a client token, off fyne's goroutine, and shows it once.
func (v *settingsView) create() {
	name := strings.TrimSpace(v.newName.Text)
	if name == "" {
		say(v.tokenStatus, "Type the client's name first, e.g. cursor.")
		return
	}
	say(v.tokenStatus, "Creating a token for "+name+"…")
	v.app.background(func(ctx context.Context) func() {
		_, token, err := v.core.Clients.Create(ctx, name)
		return func() {
			if err != nil {
				say(v.tokenStatus, "✖ Not created: "+agent.UserMessage(err))
				return
			}
			if strings.TrimSpace(v.newName.Text) == name {
				v.newName.SetText("")
			}
			say(v.tokenStatus, "Created a token for "+name+".")
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
		widget.NewLabel("The client sends it as 'Authorization: Bearer <token>' to "+v.app.opts.ServerURL),
	)
	v.app.showDialog(dialog.NewCustom("New token for "+name, "Done", body, v.app.win), nil)
}

// confirmRevoke asks before shutting a client out.
func (v *settingsView) confirmRevoke(name string) {
	v.app.showDialog(dialog.NewCustomConfirm("Revoke the token of "+name+"?", "Revoke token", "Cancel",
		plainNote(name+" can no longer call your agents, from now on, until it gets a new token."),
		func(ok bool) {
			if ok {
				v.revoke(name)
			}
		}, v.app.win), nil)
}

// confirmRotate asks before replacing a client's token.
func (v *settingsView) confirmRotate(name string) {
	v.app.showDialog(dialog.NewCustomConfirm("Rotate the token of "+name+"?", "Rotate token", "Cancel",
		plainNote("Deskhand makes "+name+" a new token and shows it once; the old one stops working at once, so update "+name+" with the new one."),
		func(ok bool) {
			if ok {
				v.rotate(name)
			}
		}, v.app.win), nil)
}

// revoke shuts a client out, off fyne's goroutine.
func (v *settingsView) revoke(name string) {
	say(v.tokenStatus, "Revoking the token of "+name+"…")
	v.app.background(func(ctx context.Context) func() {
		err := v.core.Clients.Revoke(ctx, name)
		return func() {
			if err != nil {
				say(v.tokenStatus, "✖ Not revoked: "+agent.UserMessage(err))
				return
			}
			say(v.tokenStatus, "Revoked the token of "+name+": it no longer works.")
			v.refreshClients()
		}
	})
}

// rotate replaces a client's token, off fyne's goroutine: the old one
// stops working at once and the new one is shown once.
func (v *settingsView) rotate(name string) {
	say(v.tokenStatus, "Rotating the token of "+name+"…")
	v.app.background(func(ctx context.Context) func() {
		_, token, err := v.core.Clients.Rotate(ctx, name)
		return func() {
			if err != nil {
				say(v.tokenStatus, "✖ Not rotated: "+agent.UserMessage(err))
				return
			}
			v.refreshClients()
			say(v.tokenStatus, "Rotated the token of "+name+": update the client with the new one.")
			v.showToken(name, token)
		}
	})
}

// save stores the Advanced settings, once they are valid.
func (v *settingsView) save() {
	wrong := addrProblem(v.entries["server.addr"].Text, v.insecure.Checked) != ""
	v.checkField("server.addr")
	for key, check := range advancedProblems {
		v.checkField(key)
		wrong = wrong || check(v.entries[key].Text) != ""
	}
	if wrong {
		say(v.advancedStatus, "✖ Not saved: fix the field marked above.")
		return
	}
	values := map[string]string{"server.insecure_no_auth": fmt.Sprint(v.insecure.Checked), "server.session_tools": fmt.Sprint(v.session.Checked),
		agent.SettingLogEnabled: fmt.Sprint(v.logOn.Checked)}
	for key, e := range v.entries {
		values[key] = strings.TrimSpace(e.Text)
	}
	say(v.advancedStatus, "Saving…")
	v.app.background(func(ctx context.Context) func() {
		for key, value := range values {
			if err := v.core.Settings.Set(ctx, key, value); err != nil {
				return func() { say(v.advancedStatus, "✖ Not saved: "+agent.UserMessage(err)) }
			}
		}
		return func() {
			for key, value := range values {
				if v.stored[key] != value {
					v.savedHere[key] = true
				}
				v.stored[key] = value
			}
			for key := range v.notes {
				v.checkField(key)
			}
			say(v.advancedStatus, "Saved. Deskhand uses them from its next start: quit Deskhand and open it again. The activity log's limits apply within 10 minutes, the team depth at once.")
		}
	})
}
