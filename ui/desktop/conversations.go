package desktop

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// conversationsShown bounds the list.
const conversationsShown = 200

// conversationsCore is what the Conversations tab needs of the core: the
// stored conversations and transcripts, the clients and questions that
// label them, and the stop button.
type conversationsCore interface {
	RecentConversations(ctx context.Context, limit int) ([]agent.ConversationSummary, error)
	Transcript(ctx context.Context, conversationID string) ([]agent.Message, []agent.Turn, error)
	CancelTurn(conversationID string) bool
	Clients() []agent.Client
	Pending() []agent.Question
}

// conversationsView lists conversations, live, and shows one's transcript
// with the text the model is writing right now.
type conversationsView struct {
	app     *App
	core    conversationsCore
	list    *widget.List
	search  *widget.Entry
	all     []agent.ConversationSummary
	shown   []agent.ConversationSummary
	clients []agent.Client  // to name principals
	waiting map[string]bool // conversations with a question pending

	current    string // the conversation in the transcript
	history    string // its stored transcript
	live       string // what the running turn has written so far
	transcript *widget.Label
	status     *widget.Label

	listed, opened int // count the reads, so only the latest is shown
}

func newConversationsView(app *App, core conversationsCore) *conversationsView {
	v := &conversationsView{app: app, core: core, search: widget.NewEntry(), transcript: widget.NewLabel(""), status: widget.NewLabel("")}
	v.transcript.Wrapping = fyne.TextWrapWord
	v.transcript.Selectable = true
	v.search.SetPlaceHolder("search conversations")
	v.search.OnChanged = func(string) { v.filter() }
	v.list = widget.NewList(
		func() int { return len(v.shown) },
		func() fyne.CanvasObject { return widget.NewLabel("conversation") },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			c := v.shown[i]
			o.(*widget.Label).SetText(conversationLabel(c, v.app.agentSlug(c.AgentID), clientName(c.Principal, v.clients), v.waiting[c.ID]))
		})
	v.list.OnSelected = func(i widget.ListItemID) { v.open(v.shown[i].ID) }
	return v
}

func (v *conversationsView) content() fyne.CanvasObject {
	left := container.NewBorder(v.search, nil, nil, nil, v.list)
	stop := widget.NewButton("Stop the running turn", func() {
		if v.current == "" || !v.core.CancelTurn(v.current) {
			v.status.SetText("No turn is running in this conversation.")
		}
	})
	right := container.NewBorder(nil, container.NewVBox(stop, v.status), nil, nil, container.NewVScroll(v.transcript))
	split := container.NewHSplit(left, right)
	split.Offset = 0.35
	return split
}

// refresh re-reads the list from the store, off fyne's goroutine; only
// the latest of several refreshes in flight is shown.
func (v *conversationsView) refresh() {
	v.listed++
	listed := v.listed
	v.app.background(func(ctx context.Context) func() {
		all, err := v.core.RecentConversations(ctx, conversationsShown)
		clients, pending := v.core.Clients(), v.core.Pending()
		return func() {
			if listed != v.listed {
				return
			}
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			v.all, v.clients = all, clients
			v.waiting = make(map[string]bool)
			for _, q := range pending {
				v.waiting[q.ConversationID] = true
			}
			v.filter()
		}
	})
}

func (v *conversationsView) filter() {
	v.shown = filterConversations(v.all, v.search.Text, v.app.agentSlug)
	v.list.Refresh()
}

// open shows a conversation's transcript, read off fyne's goroutine. What
// the model writes meanwhile is shown after it.
func (v *conversationsView) open(id string) {
	if id != v.current {
		v.history = ""
	}
	v.current, v.live = id, ""
	v.opened++
	opened := v.opened
	v.show()
	v.app.background(func(ctx context.Context) func() {
		msgs, turns, err := v.core.Transcript(ctx, id)
		return func() {
			if opened != v.opened {
				return
			}
			if err != nil {
				v.status.SetText(agent.UserMessage(err))
				return
			}
			v.history = renderTranscript(msgs, turns)
			v.status.SetText("")
			v.show()
		}
	})
}

func (v *conversationsView) show() {
	text := v.history
	if v.live != "" {
		text += "\n\nassistant (writing): " + v.live
	}
	v.transcript.SetText(text)
}

// event follows the core: the list on every turn, the open transcript as
// the model writes.
func (v *conversationsView) event(e agent.Event) {
	switch e.Kind {
	case agent.EventTurnStarted, agent.EventTurnEnded, agent.EventQuestionAsked, agent.EventQuestionClosed:
		v.refresh()
		if e.Conversation == v.current {
			v.open(e.Conversation)
		}
	case agent.EventDelta:
		if e.Conversation == v.current {
			v.live += e.Text
			v.show()
		}
	case agent.EventToolCall:
		if e.Conversation == v.current {
			v.live += " [calls " + e.Text + "] "
			v.show()
		}
	}
}
