// Package desktop is Deskhand's desktop, the only package besides main
// and assets that uses fyne: the tray, the main window (agents and
// the questions waiting for you) and a popup for each question. It calls
// the core through the small Core interface and learns what changed from
// the core's events; one goroutine turns events into fyne.Do calls, so
// only fyne's own goroutine touches widgets. Logic that decides what to
// show lives in plain functions, tested without a display.
package desktop

import "github.com/deskhand/deskhand/server/agent"

// Core is everything the desktop asks of the core: the union of the small
// interfaces each screen declares beside itself (agentsCore, questionsCore,
// conversationsCore, settingsCore, trayCore, eventSource). New takes one
// value for all of them; *agent.Core is one.
type Core interface {
	agentsCore
	questionsCore
	conversationsCore
	settingsCore
	trayCore
	eventSource
}

var _ Core = (*agent.Core)(nil)
