// Package desktop is Deskhand's desktop, the only package besides main
// and assets that uses fyne: the tray and the main window, whose tabs
// (Agents, Questions, Conversations, Connect, Settings, Log) each have a
// file of their own, and the question popups.
//
// Each screen declares the small interface of the core it uses beside
// itself; Core is their union, and New takes one value for all. Calls
// that may do I/O run off fyne's goroutine with a context the App owns
// and cancels when it closes (Close, or fyne stopping); their results,
// and the core's events (read by Follow's goroutine, and the activity
// log's rows by the Log tab's), reach widgets only through fyne.Do.
// Logic that decides what to show lives in plain functions, tested
// without a display.
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
