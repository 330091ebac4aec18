package desktop

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// agentServers is the editor's part for the tool servers an agent uses:
// each attachment in a line with Change… and Remove, and Use a tool
// server…. Changes apply at once, apart from Save: an attachment pins
// the tools' definitions as the server lists them when it is made.
type agentServers struct {
	app    *App
	core   Core
	slug   string // the agent shown; "" for one not saved yet
	rows   *fyne.Container
	use    *widget.Button
	status *widget.Label
}

func newAgentServers(app *App, core Core) *agentServers {
	s := &agentServers{app: app, core: core, rows: container.NewVBox(), status: feedback()}
	s.use = widget.NewButton("Use a tool server…", func() { s.showAttach(agent.AgentToolServer{}) })
	return s
}

func (s *agentServers) content() fyne.CanvasObject {
	return field("Tools from your servers (Settings → Tool servers); changes here apply at once",
		s.rows, container.NewHBox(s.use), s.status)
}

// show lists the attachments of the agent shown in the editor.
func (s *agentServers) show(a agent.Agent) {
	if a.ID == "" {
		s.slug = ""
	} else {
		s.slug = a.Slug
	}
	say(s.status, "")
	s.refresh()
}

func (s *agentServers) refresh() {
	s.rows.RemoveAll()
	servers := s.core.ToolServers.List()
	switch {
	case s.slug == "":
		s.rows.Add(plainNote("Save the agent first, then give it tools from your servers."))
		s.use.Disable()
	case len(servers) == 0:
		s.rows.Add(plainNote("No tool servers yet: add one in Settings → Tool servers."))
		s.use.Disable()
	default:
		s.use.Enable()
		attached, err := s.core.ToolServers.Attached(s.slug)
		if err != nil {
			say(s.status, "✖ "+agent.UserMessage(err))
		}
		for _, at := range attached {
			change := widget.NewButton("Change…", func() { s.showAttach(at) })
			remove := widget.NewButton("Remove", func() { s.detach(at.Server) })
			s.rows.Add(container.NewBorder(nil, nil, nil, rowButtons(change, remove), plainNote(attachmentLine(at))))
		}
	}
	s.rows.Refresh()
}

// attachmentLine says what an attachment gives: "files: all its tools;
// asks first: read_text_file".
func attachmentLine(at agent.AgentToolServer) string {
	var tools, ask []string
	for _, t := range at.Tools {
		tools = append(tools, t.Tool)
		if t.AskFirst {
			ask = append(ask, t.Tool)
		}
	}
	line := at.Server + ": " + strings.Join(tools, ", ")
	if at.AllTools {
		line = at.Server + ": all its tools"
	}
	if len(ask) > 0 {
		line += "; asks you first: " + strings.Join(ask, ", ")
	}
	return line
}

// toolChoice is one tool in the attach dialog.
type toolChoice struct {
	tool     agent.CheckedTool
	use, ask *widget.Check
}

// attachmentOf is the request the dialog's choices make.
func attachmentOf(server string, all bool, choices []toolChoice) (agent.ToolServerAttachment, error) {
	req := agent.ToolServerAttachment{Server: server}
	for _, c := range choices {
		if !all && c.use.Checked {
			req.Tools = append(req.Tools, c.tool.Tool)
		}
		if (all || c.use.Checked) && c.ask.Checked {
			req.AskFirst = append(req.AskFirst, c.tool.Tool)
		}
	}
	if !all && len(req.Tools) == 0 {
		return req, fmt.Errorf("choose at least one tool, or all of them")
	}
	return req, nil
}

// showAttach asks which server, which of its tools and which ask first;
// at is the attachment being changed (Server "" for a new one).
func (s *agentServers) showAttach(at agent.AgentToolServer) {
	var names []string
	for _, srv := range s.core.ToolServers.List() {
		names = append(names, srv.Name)
	}
	slug := s.slug
	pick := widget.NewSelect(names, nil)
	all := widget.NewCheck("All its tools, and those it adds later", nil)
	tools := container.NewVBox()
	problem := widget.NewLabel("")
	problem.Wrapping = fyne.TextWrapWord
	var choices []toolChoice
	load := func(server string) {
		tools.RemoveAll()
		tools.Add(plainNote("Asking " + server + " for its tools…"))
		tools.Refresh()
		choices = nil
		s.app.background(func(ctx context.Context) func() {
			res, err := s.core.ToolServers.Check(ctx, server)
			return func() {
				tools.RemoveAll()
				switch {
				case err != nil:
					tools.Add(plainNote("✖ " + agent.UserMessage(err)))
				case res.Error != "":
					tools.Add(plainNote("✖ " + server + " did not answer: " + oneLine(res.Error)))
				}
				for _, t := range res.Tools {
					c := toolChoice{tool: t, use: widget.NewCheck(t.Name, nil), ask: widget.NewCheck("ask me first", nil)}
					c.use.SetChecked(at.Server != server || slices.ContainsFunc(at.Tools, func(x agent.AttachedTool) bool { return x.Tool == t.Tool }))
					c.ask.SetChecked(slices.ContainsFunc(at.Tools, func(x agent.AttachedTool) bool { return x.Tool == t.Tool && x.AskFirst }))
					if !t.ReadOnly {
						// The core asks first for every tool its server
						// does not mark read-only.
						c.ask.SetChecked(true)
						c.ask.Disable()
					}
					if all.Checked {
						c.use.Disable()
					}
					choices = append(choices, c)
					tools.Add(container.NewBorder(nil, plainNote(oneLine(t.Description)), nil, c.ask, c.use))
				}
				tools.Refresh()
			}
		})
	}
	pick.OnChanged = load
	all.OnChanged = func(on bool) {
		for _, c := range choices {
			if on {
				c.use.Disable()
			} else {
				c.use.Enable()
			}
		}
	}
	body := container.NewVBox(widget.NewLabel("Server"), pick, all, tools, problem)
	scroll := container.NewVScroll(body)
	scroll.SetMinSize(fyne.NewSize(560, 420))
	var d *dialog.CustomDialog
	apply := widget.NewButton("Give these tools", func() {
		if pick.Selected == "" {
			problem.SetText("✖ Choose a server.")
			return
		}
		req, err := attachmentOf(pick.Selected, all.Checked, choices)
		if err != nil {
			problem.SetText("✖ " + err.Error())
			return
		}
		s.app.background(func(ctx context.Context) func() {
			_, err := s.core.ToolServers.Attach(ctx, slug, req)
			return func() {
				if err != nil {
					problem.SetText("✖ " + agent.UserMessage(err))
					return
				}
				d.Hide()
				say(s.status, fmt.Sprintf("%s now uses the tools of %s, as they are defined today.", slug, req.Server))
				s.refresh()
			}
		})
	})
	apply.Importance = widget.HighImportance
	d = dialog.NewCustomWithoutButtons("Tools from a server for "+slug, scroll, s.app.win)
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { d.Hide() }), apply})
	s.app.showDialog(d, nil)
	if at.Server != "" {
		pick.SetSelected(at.Server)
		all.SetChecked(at.AllTools)
	}
}

func (s *agentServers) detach(server string) {
	slug := s.slug
	s.app.background(func(ctx context.Context) func() {
		err := s.core.ToolServers.Detach(ctx, slug, server)
		return func() {
			if err != nil {
				say(s.status, "✖ "+agent.UserMessage(err))
				return
			}
			say(s.status, slug+" no longer uses "+server+".")
			s.refresh()
		}
	})
}
