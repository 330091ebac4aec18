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
			result := it.Result
			if result == "" {
				result = "Running…"
			}
			item := widget.NewAccordionItem(it.Text, words(result, importanceOf(it.Failed, widget.MediumImportance)))
			out = append(out, widget.NewAccordion(item))
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
