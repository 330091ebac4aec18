package desktop

// The load probe, for make load only: the desktop under load as a person
// would have it, the Conversations tab showing a running conversation,
// and a line in the log when a question's popup shows, which the load
// test reads to time the popups and answer them, and one when a
// conversation's row shows a new state, by which the GUI walk times the
// list against its clients. It is on only in a
// program built with the tag loadprobe (loadprobe_on.go), which make load
// builds; the shipped program has it off.

// startProbe opens the Conversations tab.
func (a *App) startProbe() {
	if loadProbe {
		a.tabs.SelectIndex(tabConversations)
	}
}

// probeOpen opens the latest conversation listed, once, when nothing is
// open.
func (v *conversationsView) probeOpen() {
	if loadProbe && v.current == "" && len(v.shown) > 0 {
		v.list.Select(0)
	}
}

// probeShown logs that the popup of question id is shown.
func (a *App) probeShown(id string) {
	if loadProbe {
		a.log.Info("question popup shown", "question", id)
	}
}

// probeRow logs the state a conversation's row shows when it changes.
func (v *conversationsView) probeRow(id, state string) {
	if !loadProbe || v.probed[id] == state {
		return
	}
	if v.probed == nil {
		v.probed = map[string]string{}
	}
	v.probed[id] = state
	v.app.log.Info("conversation row shown", "conversation", id, "state", state)
}
