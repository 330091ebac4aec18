package desktop

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// maxNesting bounds how deep the transcript follows team members' own
// conversations (the core bounds delegation by team.max_depth, 3 by
// default).
const maxNesting = 5

// subTranscript is a team member's conversation called from a turn: its
// stored turns, and those of the members it called in turn.
type subTranscript struct {
	conv   agent.Conversation
	msgs   []agent.Message
	turns  []agent.Turn
	qs     []agent.Question
	nested map[string][]subTranscript // by the member's turn ID
}

// readSubTranscripts reads, for each of turns, the conversations of the
// team members it called, and theirs, depth levels down.
func readSubTranscripts(ctx context.Context, core Core, turns []agent.Turn, depth int) (map[string][]subTranscript, error) {
	if depth <= 0 {
		return nil, nil
	}
	var out map[string][]subTranscript
	for _, t := range turns {
		subs, err := core.Conversations.Subs(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		for _, c := range subs {
			s := subTranscript{conv: c}
			if s.msgs, s.turns, err = core.Conversations.Transcript(ctx, c.ID); err != nil {
				return nil, err
			}
			if s.qs, err = core.Conversations.Questions(ctx, c.ID); err != nil {
				return nil, err
			}
			if s.nested, err = readSubTranscripts(ctx, core, s.turns, depth-1); err != nil {
				return nil, err
			}
			if out == nil {
				out = map[string][]subTranscript{}
			}
			out[t.ID] = append(out[t.ID], s)
		}
	}
	return out, nil
}

// subHeading says who worked on a turn's request in a conversation of
// its own.
func subHeading(member, caller string) string {
	return fmt.Sprintf("↳ %s worked on it for %s, in a conversation of its own:", member, caller)
}

// nestedWidgets draw the members' conversations a turn called, indented
// under it: each member's turns as any transcript draws them (the caller
// speaking as the user), and theirs further in.
func (v *conversationsView) nestedWidgets(subs []subTranscript, caller string) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	for _, s := range subs {
		ag, found := v.agentOf(s.conv.AgentID)
		sp := speakersOf(agent.LocalPrincipal, nil, ag, found)
		sp.User, sp.Client = caller, caller
		head := widget.NewLabelWithStyle(subHeading(sp.Agent, caller), fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
		head.Wrapping = fyne.TextWrapWord
		objs := []fyne.CanvasObject{head}
		for _, t := range turnViews(s.msgs, s.turns, s.qs, sp, "") {
			objs = append(objs, turnWidgets(t)...)
			objs = append(objs, v.nestedWidgets(s.nested[t.ID], sp.Agent)...)
		}
		out = append(out, indented(container.NewVBox(objs...)))
	}
	return out
}

// indented sets o in from the left, with a rule beside it.
func indented(o fyne.CanvasObject) fyne.CanvasObject {
	rule := canvas.NewRectangle(theme.Color(theme.ColorNameSeparator))
	rule.SetMinSize(fyne.NewSize(2, 0))
	gap := canvas.NewRectangle(nil)
	gap.SetMinSize(fyne.NewSize(3*theme.Padding(), 0))
	return container.NewBorder(nil, nil, container.NewHBox(gap, rule), nil, o)
}
