package desktop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// toolServersView lists the tool servers, each with its state, Check,
// Log and Remove, the held tools with Review, and Add a server….
type toolServersView struct {
	app    *App
	core   Core
	rows   *fyne.Container
	held   *fyne.Container
	status *widget.Label
}

func newToolServersView(app *App, core Core) *toolServersView {
	return &toolServersView{app: app, core: core, rows: container.NewVBox(), held: container.NewVBox(), status: feedback()}
}

func (v *toolServersView) content() fyne.CanvasObject {
	intro := plainNote("Your own MCP servers (files, GitHub, databases, browsers…), for your agents to use as tools. " +
		"A server starts when an agent first needs it and stops when idle. Give one to an agent in its editor " +
		"(Agents, then Use a tool server…); its tools then ask you first unless the server marks them read-only.")
	intro.Wrapping = fyne.TextWrapWord
	buttons := container.NewHBox(widget.NewButton("Add a server…", v.showAdd))
	if v.app.opts.ImportToolServers != nil {
		buttons.Add(widget.NewButton("Import from your clients…", v.showImport))
	}
	buttons.Add(widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), v.refresh))
	return container.NewVScroll(container.NewVBox(intro, buttons, v.status, v.held, v.rows))
}

// refresh reads the servers, their states and the held tools; the core
// keeps them in memory, so no I/O waits on fyne's goroutine.
func (v *toolServersView) refresh() {
	servers, statuses, held := v.core.ToolServers.List(), v.core.ToolServers.Statuses(), v.core.ToolServers.Held()
	v.rows.RemoveAll()
	if len(servers) == 0 {
		v.rows.Add(plainNote("No tool servers yet: add one here, or import those your clients know."))
	}
	for _, s := range servers {
		v.rows.Add(v.row(s, serverStatus(statuses, s.Name)))
	}
	v.held.RemoveAll()
	for _, h := range held {
		review := widget.NewButton("Review…", func() { v.showHeld(h) })
		v.held.Add(container.NewBorder(nil, nil, nil, review, plainNote("⚠ "+heldLine(h))))
	}
	v.rows.Refresh()
	v.held.Refresh()
}

func (v *toolServersView) row(s agent.ToolServer, st agent.ToolServerStatus) fyne.CanvasObject {
	title := widget.NewLabelWithStyle(s.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	line := plainNote(serverLine(s, st))
	line.Wrapping = fyne.TextWrapWord
	check := widget.NewButton("Check", func() { v.check(s.Name) })
	log := widget.NewButton("Log", func() { v.openLog(s.Name) })
	remove := widget.NewButton("Remove…", func() { v.confirmRemove(s.Name) })
	return container.NewBorder(nil, nil, nil, rowButtons(check, log, remove), container.NewVBox(title, line))
}

// serverStatus is the named server's status; a server the running set has not
// seen yet is stopped.
func serverStatus(statuses []agent.ToolServerStatus, name string) agent.ToolServerStatus {
	for _, st := range statuses {
		if st.Name == name {
			return st
		}
	}
	return agent.ToolServerStatus{Name: name, State: "stopped"}
}

// serverLine says what a server runs and how it is doing, in a line:
// "npx -y server-filesystem /home/a · running · 14 tools".
func serverLine(s agent.ToolServer, st agent.ToolServerStatus) string {
	where := s.URL
	if s.IsStdio() {
		where = strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	parts := []string{where, cmp.Or(st.State, "stopped")}
	if st.Tools > 0 {
		parts = append(parts, countOf(st.Tools, "tool"))
	}
	if n := len(s.SecretEnv) + len(s.SecretHeaders); n > 0 {
		parts = append(parts, countOf(n, "secret")+" in the keychain")
	}
	if s.AllowSampling {
		parts = append(parts, "may use the agent's model")
	}
	line := strings.Join(parts, " · ")
	if st.LastError != "" {
		line += "\n✖ " + oneLine(st.LastError)
	}
	return line
}

// heldLine says which tool is held, for whom, and why.
func heldLine(h agent.HeldTool) string {
	if h.Old == "" {
		return fmt.Sprintf("%s's tool %s is new to %s: it is held until you look at it.", h.Server, h.Tool, h.Agent)
	}
	return fmt.Sprintf("%s changed its tool %s since you gave it to %s: it is held until you look again.", h.Server, h.Tool, h.Agent)
}

// showImport shows what importing the clients' servers would register,
// and registers them once the person agrees.
func (v *toolServersView) showImport() {
	say(v.status, "Reading your clients' settings…")
	v.app.background(func(ctx context.Context) func() {
		report, err := v.app.opts.ImportToolServers(ctx, true)
		return func() {
			if err != nil {
				say(v.status, "✖ "+agent.UserMessage(err))
				return
			}
			say(v.status, "")
			text := widget.NewLabelWithStyle(report.table(), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
			scroll := container.NewScroll(container.NewVBox(plainNote("What your clients' settings hold. Secrets go to the keychain; Deskhand's own entries are left out."), text))
			scroll.SetMinSize(fyne.NewSize(720, 360))
			v.app.showDialog(dialog.NewCustomConfirm("Import tool servers from your clients", "Import", "Cancel", scroll, func(ok bool) {
				if ok {
					v.runImport()
				}
			}, v.app.win), nil)
		}
	})
}

func (v *toolServersView) runImport() {
	v.app.background(func(ctx context.Context) func() {
		report, err := v.app.opts.ImportToolServers(ctx, false)
		return func() {
			if err != nil {
				say(v.status, "✖ "+agent.UserMessage(err))
				return
			}
			say(v.status, importSummary(report.Imported))
			v.refresh()
		}
	})
}

// ImportReport is what an import of the clients' tool servers found and
// did.
type ImportReport struct {
	Imported int
	Rows     []ImportRow
	// Notes are what it read past: entries skipped, files unreadable.
	Notes []string
}

// ImportRow is one server found, the clients it came from, and what
// became of it.
type ImportRow struct{ Name, From, Result string }

// table lays the report out in columns, for a monospace label.
func (r ImportReport) table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tRESULT")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.Name, row.From, row.Result)
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintln(&b, n)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// importSummary says what an import registered.
func importSummary(n int) string {
	if n == 0 {
		return "Nothing new to import."
	}
	return "Imported " + countOf(n, "server") + ". Give one to an agent in its editor."
}

// heldNote tells the person, in a notification, that a turn met a held
// tool (e.Text is the name the model knows it by).
func heldNote(e agent.Event) string {
	return fmt.Sprintf("%s could not use %s: its definition changed. Review it in Settings → Tool servers.", e.Agent, e.Text)
}

// check starts the server if need be and shows its tools.
func (v *toolServersView) check(name string) {
	say(v.status, "Checking "+name+"…")
	v.app.background(func(ctx context.Context) func() {
		res, err := v.core.ToolServers.Check(ctx, name)
		return func() {
			v.refresh()
			if err != nil {
				say(v.status, "✖ "+agent.UserMessage(err))
				return
			}
			head, text := checkText(name, res)
			say(v.status, head)
			body := widget.NewLabel(text)
			body.Wrapping = fyne.TextWrapWord
			scroll := container.NewVScroll(body)
			scroll.SetMinSize(fyne.NewSize(560, 320))
			v.app.showDialog(dialog.NewCustom(head, "Close", scroll, v.app.win), nil)
		}
	})
}

// checkText is what a check found: a heading and the tools, one per line
// with the name the model sees, or why the server could not be asked.
func checkText(name string, res agent.ToolServerCheck) (head, text string) {
	if res.Error != "" {
		return "✖ " + name + " did not answer", res.Error
	}
	head = fmt.Sprintf("✔ %s answers with %s", name, countOf(len(res.Tools), "tool"))
	var lines []string
	for _, t := range res.Tools {
		line := t.Name
		if t.ReadOnly {
			line += " (read-only)"
		}
		if d := oneLine(t.Description); d != "" {
			line += ": " + d
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return head, "It lists no tools."
	}
	return head, strings.Join(lines, "\n")
}

// openLog hands the server's log file to the system.
func (v *toolServersView) openLog(name string) {
	st := serverStatus(v.core.ToolServers.Statuses(), name)
	if st.LogFile == "" {
		say(v.status, name+" has no log yet: it is written once the server starts (Check starts it).")
		return
	}
	if _, err := os.Stat(st.LogFile); err != nil {
		say(v.status, name+" has no log yet: it is written once the server starts (Check starts it).")
		return
	}
	if err := v.app.fy.OpenURL(fileURL(st.LogFile)); err != nil {
		v.app.log.Warn("open a tool server's log", "server", name, "err", err)
		say(v.status, "✖ Could not open the log; it is "+st.LogFile)
		return
	}
	say(v.status, "Opened "+st.LogFile)
}

func (v *toolServersView) confirmRemove(name string) {
	v.app.showDialog(dialog.NewCustomConfirm("Remove the tool server "+name+"?", "Remove server", "Cancel",
		plainNote("Agents that use it lose its tools, and its secrets leave the keychain."),
		func(ok bool) {
			if !ok {
				return
			}
			v.app.background(func(ctx context.Context) func() {
				err := v.core.ToolServers.Remove(ctx, name)
				return func() {
					if err != nil {
						say(v.status, "✖ Could not remove "+name+": "+agent.UserMessage(err))
						return
					}
					say(v.status, "Removed "+name+".")
					v.refresh()
				}
			})
		}, v.app.win), nil)
}

// showHeld shows what changed in a held tool and lets the person trust
// the new definition.
func (v *toolServersView) showHeld(h agent.HeldTool) {
	old := h.Old
	if old == "" {
		old = "(none: the tool was not there when you gave the server to " + h.Agent + ")"
	}
	body := widget.NewLabel("Before:\n" + old + "\n\nNow:\n" + h.New)
	body.Wrapping = fyne.TextWrapWord
	scroll := container.NewVScroll(container.NewVBox(plainNote(heldLine(h)+
		" A changed description or schema can carry instructions you did not agree to: read it before you trust it."), body))
	scroll.SetMinSize(fyne.NewSize(600, 360))
	v.app.showDialog(dialog.NewCustomConfirm("Review "+h.Server+"'s "+h.Tool, "Trust the new definition", "Keep it held", scroll,
		func(ok bool) {
			if !ok {
				return
			}
			v.app.background(func(ctx context.Context) func() {
				err := v.core.ToolServers.Repin(ctx, h.Agent, h.Server, h.Tool)
				return func() {
					if err != nil {
						say(v.status, "✖ "+agent.UserMessage(err))
						return
					}
					say(v.status, fmt.Sprintf("%s may use %s's %s again.", h.Agent, h.Server, h.Tool))
					v.refresh()
				}
			})
		}, v.app.win), nil)
}

// serverForm is the Add dialog's fields, read by parse.
type serverForm struct {
	// how: a program on this computer (command, arguments, folder,
	// variables) or a server at an address (URL, headers); only its part
	// shows, and only its part is sent.
	how                     *widget.RadioGroup
	name, command, url, dir *widget.Entry
	args, env, headers      *widget.Entry // one per line: arguments, KEY=VALUE, Name: value
	// The secret variables and headers added, each under its part.
	variableSecrets, headerSecrets *fyne.Container
	secretRows                     []secretRow
	sampling                       *widget.Check
}

// secretRow is one secret variable or header: its name and its value,
// typed hidden.
type secretRow struct {
	header bool
	name   *widget.Entry
	value  *widget.Entry
}

// formValues is what the Add dialog holds, as text.
type formValues struct {
	Name, Command, Args, Dir, Env, URL, Headers string
	Secrets                                     []secretValue
	Sampling                                    bool
}

type secretValue struct {
	Header      bool
	Name, Value string
}

// parseServerForm turns the Add dialog's text into a server and its
// secrets, or says what is wrong with it.
func parseServerForm(f formValues) (agent.ToolServer, agent.ToolServerSecrets, error) {
	s := agent.ToolServer{Name: strings.TrimSpace(f.Name), Command: strings.TrimSpace(f.Command), Dir: strings.TrimSpace(f.Dir),
		URL: strings.TrimSpace(f.URL), AllowSampling: f.Sampling}
	sec := agent.ToolServerSecrets{}
	switch {
	case s.Name == "":
		return s, sec, errors.New("give the server a name: letters, digits, '_' and '-'")
	case s.Command == "" && s.URL == "":
		return s, sec, errors.New("give a command to run, or the URL of a server that is already running")
	case s.Command != "" && s.URL != "":
		return s, sec, errors.New("give a command or a URL, not both")
	}
	s.Args = lines(f.Args)
	var err error
	if s.Env, err = pairs(f.Env, "=", "a variable"); err != nil {
		return s, sec, err
	}
	if s.Headers, err = pairs(f.Headers, ":", "a header"); err != nil {
		return s, sec, err
	}
	if s.Command != "" && len(s.Headers) > 0 {
		return s, sec, errors.New("headers are for a server at a URL; a command gets variables")
	}
	for _, x := range f.Secrets {
		name := strings.TrimSpace(x.Name)
		if name == "" && x.Value == "" {
			continue
		}
		if name == "" || x.Value == "" {
			return s, sec, errors.New("each secret needs a name and a value")
		}
		if x.Header {
			if s.Command != "" {
				return s, sec, fmt.Errorf("the secret header %s is for a server at a URL; a command gets secret variables", name)
			}
			s.SecretHeaders = append(s.SecretHeaders, name)
			sec.Headers = setKey(sec.Headers, name, x.Value)
		} else {
			s.SecretEnv = append(s.SecretEnv, name)
			sec.Env = setKey(sec.Env, name, x.Value)
		}
	}
	return s, sec, nil
}

func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// pairs reads "KEY=VALUE" (or "Name: value") lines.
func pairs(text, sep, what string) (map[string]string, error) {
	var out map[string]string
	for _, l := range lines(text) {
		k, val, ok := strings.Cut(l, sep)
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, fmt.Errorf("%q is not %s: write NAME%sVALUE, one per line", l, what, sep)
		}
		out = setKey(out, k, strings.TrimSpace(val))
	}
	return out, nil
}

// Ways a tool server runs, in the Add dialog.
const (
	runsHere    = "A program on this computer"
	runsAddress = "A server at an address"
)

func (f *serverForm) values() formValues {
	v := formValues{Name: f.name.Text, Sampling: f.sampling.Checked}
	atAddress := f.how.Selected == runsAddress
	if atAddress {
		v.URL, v.Headers = f.url.Text, f.headers.Text
	} else {
		v.Command, v.Args, v.Dir, v.Env = f.command.Text, f.args.Text, f.dir.Text, f.env.Text
	}
	for _, r := range f.secretRows {
		if r.header == atAddress {
			v.Secrets = append(v.Secrets, secretValue{Header: r.header, Name: r.name.Text, Value: r.value.Text})
		}
	}
	return v
}

func (f *serverForm) addSecret(header bool) {
	r := secretRow{header: header, name: widget.NewEntry(), value: widget.NewPasswordEntry()}
	if header {
		r.name.SetPlaceHolder("Secret header, e.g. Authorization")
	} else {
		r.name.SetPlaceHolder("Secret variable, e.g. GITHUB_TOKEN")
	}
	r.value.SetPlaceHolder("its value (kept in the keychain)")
	f.secretRows = append(f.secretRows, r)
	secrets := f.variableSecrets
	if header {
		secrets = f.headerSecrets
	}
	secrets.Add(container.NewGridWithColumns(2, r.name, r.value))
	secrets.Refresh()
}

// showAdd asks for a new server: a command (with its arguments, folder
// and variables) or a URL (with its headers), secrets typed hidden.
func (v *toolServersView) showAdd() {
	f := &serverForm{name: widget.NewEntry(), command: widget.NewEntry(), url: widget.NewEntry(), dir: widget.NewEntry(),
		args: widget.NewMultiLineEntry(), env: widget.NewMultiLineEntry(), headers: widget.NewMultiLineEntry(),
		variableSecrets: container.NewVBox(), headerSecrets: container.NewVBox(),
		sampling: widget.NewCheck("Let it ask for the agent's model (sampling: it spends your model's time)", nil)}
	f.name.SetPlaceHolder("such as files")
	f.command.SetPlaceHolder("such as npx")
	f.args.SetPlaceHolder("such as -y, then @modelcontextprotocol/server-filesystem, then /home/you/notes")
	f.args.SetMinRowsVisible(3)
	f.url.SetPlaceHolder("such as https://example.com/mcp")
	f.env.SetPlaceHolder("such as LOG_LEVEL=info")
	f.env.SetMinRowsVisible(2)
	f.headers.SetPlaceHolder("such as X-Team: docs")
	f.headers.SetMinRowsVisible(2)
	f.dir.SetPlaceHolder("optional")
	problem := widget.NewLabel("")
	problem.Wrapping = fyne.TextWrapWord
	problem.Hide()
	kept := plainNote(v.app.keptNote("Secrets are kept in the system keychain, never in Deskhand's files."))
	scroll := container.NewVScroll(nil)
	in := func(e fyne.CanvasObject) fyne.CanvasObject { return underWheel(e, scroll) } // the wheel scrolls the form
	here := container.NewVBox(
		widget.NewLabel("Command"), f.command,
		widget.NewLabel("Its arguments, one per line"), in(f.args),
		widget.NewLabel("Its folder"), f.dir,
		widget.NewLabel("Its variables, NAME=VALUE per line"), in(f.env),
		container.NewHBox(widget.NewButton("Add a secret variable", func() { f.addSecret(false) })), f.variableSecrets)
	address := container.NewVBox(
		widget.NewLabel("URL"), f.url,
		widget.NewLabel("Its headers, Name: value per line"), in(f.headers),
		container.NewHBox(widget.NewButton("Add a secret header", func() { f.addSecret(true) })), f.headerSecrets)
	f.how = widget.NewRadioGroup([]string{runsHere, runsAddress}, func(how string) {
		if how == runsAddress {
			here.Hide()
			address.Show()
		} else {
			address.Hide()
			here.Show()
		}
	})
	f.how.Required = true
	f.how.SetSelected(runsHere)
	scroll.Content = container.NewVBox(
		widget.NewLabel("Name (its tools are offered as NAME__tool)"), f.name,
		f.how, here, address,
		kept, f.sampling, problem)
	scroll.SetMinSize(fyne.NewSize(560, 460))
	var d *dialog.CustomDialog
	save := widget.NewButton("Add server", func() {
		s, sec, err := parseServerForm(f.values())
		if err != nil {
			problem.SetText("✖ " + err.Error())
			problem.Show()
			return
		}
		v.app.background(func(ctx context.Context) func() {
			err := v.core.ToolServers.Add(ctx, s, sec)
			return func() {
				if err != nil {
					problem.SetText("✖ " + agent.UserMessage(err))
					problem.Show()
					return
				}
				d.Hide()
				say(v.status, "Added "+s.Name+". Check starts it and lists its tools.")
				v.refresh()
			}
		})
	})
	save.Importance = widget.HighImportance
	d = dialog.NewCustomWithoutButtons("Add a tool server", scroll, v.app.win)
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { d.Hide() }), save})
	v.app.showDialog(d, nil)
}
