package desktop

// The load probe (Options.LoadProbe), for make load: the desktop under
// load as a person would have it, the Conversations tab showing a running
// conversation, and a line in the log when a question's popup shows, which
// the load test reads to time the popups and answer them.

// startProbe opens the Conversations tab.
func (a *App) startProbe() {
	if a.opts.LoadProbe {
		a.tabs.SelectIndex(tabConversations)
	}
}

// probeOpen opens the latest conversation listed, once, when nothing is
// open.
func (v *conversationsView) probeOpen() {
	if v.app.opts.LoadProbe && v.current == "" && len(v.shown) > 0 {
		v.list.Select(0)
	}
}

// probeShown logs that the popup of question id is shown.
func (a *App) probeShown(id string) {
	if a.opts.LoadProbe {
		a.log.Info("question popup shown", "question", id)
	}
}
