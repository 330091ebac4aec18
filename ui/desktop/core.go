// Package desktop is Deskhand's desktop, the only package besides main
// and assets that uses fyne: the tray (whether it serves, the questions
// waiting, open, each agent's kill switch, connect, settings, pause,
// quit) and the main window. Around its tabs: a status bar (serving or
// paused, the address to copy, what the model servers answered, the
// agents served, the clients seen today), a banner with Resume while
// paused, a first-run panel that leads to a working agent, and a menu
// with the keyboard's shortcuts (Ctrl+1…6, Ctrl+P, Ctrl+Q; Escape closes
// a dialog). The six tabs: Agents (edit, delete and switch agents, run
// each on a provider's model or the calling client's, pick a model or
// pull one for Ollama, give it a team and tools from the person's MCP
// servers, try an agent), Questions (each also in a popup of
// its own), Conversations (live transcripts, team members' conversations under
// the turn that called them, stop a turn), Connect
// (write Deskhand into MCP clients' settings through a Connector and
// verify it), Settings (client tokens with each client's last use and
// calls today, the server's settings and the activity log's, an Ollama
// check, start at login; Models: the providers agents run on, their
// API keys and a check of each; Approvals: the rules that skip a question;
// Tool servers: the person's MCP servers, their state, tools and log, the
// tools held because their definition changed) and Log (the activity log, live and
// filtered; a request opens its conversation; export).
//
// Each screen declares the small interface of the core it uses beside
// itself; Core is their union, and New takes one value for all. Calls
// that may do I/O run off fyne's goroutine with a context the App owns
// and cancels when it closes (Close, or fyne stopping); their results,
// and the core's events (read by Follow's goroutine, and the activity
// log's rows by the Log tab's), reach widgets
// only through fyne.Do. Logic that decides what to show lives in plain
// functions, tested without a display.
package desktop

import "github.com/deskhand/deskhand/server/agent"

// Core is everything the desktop asks of the core: the union of the small
// interfaces each screen declares beside itself (agentsCore, questionsCore,
// conversationsCore, settingsCore, providersCore, trayCore,
// eventSource, approvalsCore, activityCore, toolServersCore, agentServersCore). New takes one value for all of them; *agent.Core is one.
type Core interface {
	agentsCore
	questionsCore
	conversationsCore
	settingsCore
	providersCore
	trayCore
	eventSource
	approvalsCore
	activityCore
	toolServersCore
	agentServersCore
}

var _ Core = (*agent.Core)(nil)
