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
			out = append(out, said(speaker(it.Who), words(it.Text, widget.MediumImportance)))
		case itemQuestion:
			q := said(speaker(it.Who+" asked"), words(it.Text, widget.MediumImportance))
			if it.Result != "" {
				q.Add(words(it.Result, importanceOf(it.Failed, widget.LowImportance)))
			}
			out = append(out, q)
		case itemCall:
			out = append(out, newCallRow(it))
		}
	}
	if t.Summary != "" {
		s := widget.NewLabelWithStyle(t.Summary, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
		s.Wrapping, s.Importance = fyne.TextWrapWord, importanceOf(t.Failed, widget.LowImportance)
		out = append(out, s)
	}
	return out
}

// said keeps a speaker's name close to their words.
func said(objs ...fyne.CanvasObject) *fyne.Container {
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
	args := words(it.Call, widget.LowImportance)
	l.detail = container.NewVBox(args, words(result, importanceOf(it.Failed, widget.MediumImportance)))
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

func speaker(name string) *widget.Label {
	l := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

func words(text string, imp widget.Importance) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping, l.Selectable, l.Importance = fyne.TextWrapWord, true, imp
	return l
}

func importanceOf(failed bool, otherwise widget.Importance) widget.Importance {
	if failed {
		return widget.DangerImportance
	}
	return otherwise
}
