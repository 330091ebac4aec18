package desktop

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// turnWidgets draw a turn as a conversation: who says what, each tool
// call a line that opens on its result, the questions and who answered,
// and the outcome (in the error colour when the turn failed).
func turnWidgets(t transcriptTurn) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	for _, it := range t.Items {
		switch it.Kind {
		case itemMessage:
			out = append(out, saidBox(speakerLabel(it.Who), wordsLabel(it.Text, widget.MediumImportance)))
		case itemQuestion:
			q := saidBox(speakerLabel(it.Who+" asked"), wordsLabel(it.Text, widget.MediumImportance))
			if it.Result != "" {
				q.Add(wordsLabel(it.Result, failedOr(it.Failed, widget.LowImportance)))
			}
			out = append(out, q)
		case itemCall:
			out = append(out, newCallRow(it))
		}
	}
	if t.Summary != "" {
		s := widget.NewLabelWithStyle(t.Summary, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
		s.Wrapping, s.Importance = fyne.TextWrapWord, failedOr(t.Failed, widget.LowImportance)
		out = append(out, s)
	}
	return out
}

// saidBox keeps a speaker's name close to their words.
func saidBox(objs ...fyne.CanvasObject) *fyne.Container {
	return container.New(layout.NewCustomPaddedVBoxLayout(-2*theme.Padding()), objs...)
}

// callRow is a tool call in a line that never widens the window (it is
// cut with an ellipsis), and a button that opens it on its arguments and
// result.
type callRow struct {
	widget.BaseWidget
	title  *widget.Label
	toggle *widget.Button
	detail *fyne.Container
}

func newCallRow(it transcriptItem) *callRow {
	l := &callRow{title: widget.NewLabel(it.Text)}
	l.title.Truncation = fyne.TextTruncateEllipsis
	result := it.Result
	if result == "" {
		result = "Running…"
	}
	args := wordsLabel(it.Call, widget.LowImportance)
	l.detail = container.NewVBox(args, wordsLabel(result, failedOr(it.Failed, widget.MediumImportance)))
	if it.Call == "" {
		args.Hide()
	}
	l.detail.Hide()
	if it.Failed {
		l.title.Importance = widget.DangerImportance
	}
	l.toggle = widget.NewButtonWithIcon("", theme.MenuExpandIcon(), l.flip)
	l.toggle.Importance = widget.LowImportance
	l.ExtendBaseWidget(l)
	return l
}

// flip opens or closes the call.
func (l *callRow) flip() {
	if l.detail.Visible() {
		l.detail.Hide()
		l.toggle.SetIcon(theme.MenuExpandIcon())
	} else {
		l.detail.Show()
		l.toggle.SetIcon(theme.MenuDropDownIcon())
	}
}

func (l *callRow) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewVBox(container.NewBorder(nil, nil, l.toggle, nil, l.title), l.detail))
}

func speakerLabel(name string) *widget.Label {
	l := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

func wordsLabel(text string, imp widget.Importance) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping, l.Selectable, l.Importance = fyne.TextWrapWord, true, imp
	return l
}

func failedOr(failed bool, otherwise widget.Importance) widget.Importance {
	if failed {
		return widget.DangerImportance
	}
	return otherwise
}
