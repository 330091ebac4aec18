package desktop

import (
	"context"
	"io"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// iconField is the editor's "Icon" field, in "Served as": an emoji typed
// in its entry, or an image picked from a file ("Pick an image…"), which
// the entry then describes. What is wrong shows under it.
type iconField struct {
	v     *agentsView
	entry *editorEntry
	// image is the picked image as a data: URI; "" when the icon is the
	// entry's text.
	image       string
	imageLabel  *widget.Label
	pick, clear *widget.Button
	hint        *note
	box         fyne.CanvasObject
}

func newIconField(v *agentsView) *iconField {
	f := &iconField{v: v, entry: newEditorEntry(), imageLabel: widget.NewLabel(""), hint: newNote(widget.DangerImportance)}
	f.entry.SetPlaceHolder("an emoji, such as 🦊")
	f.entry.OnChanged = func(s string) {
		if s != "" && !v.loading {
			f.setImage("") // typed: the emoji replaces a picked image
		}
		f.hint.SetText(iconProblem(s))
		v.changed()
	}
	f.pick = widget.NewButton("Pick an image…", f.pickImage)
	f.clear = widget.NewButton("Remove image", func() {
		f.setImage("")
		f.hint.SetText("")
		v.changed()
	})
	f.imageLabel.Hide()
	f.clear.Hide()
	f.box = container.NewVBox(
		container.NewBorder(nil, nil, nil, f.pick, f.entry),
		container.NewBorder(nil, nil, nil, f.clear, f.imageLabel),
	)
	return f
}

// set shows an agent's icon: text in the entry, an image described.
func (f *iconField) set(icon string) {
	text, image := splitIcon(icon)
	f.entry.SetText(text)
	f.setImage(image)
	f.hint.SetText("")
}

// value is the icon as the editor holds it.
func (f *iconField) value() string { return iconOf(f.entry.Text, f.image) }

func (f *iconField) setImage(image string) {
	if image == f.image && (image == "") == f.imageLabel.Hidden {
		return
	}
	f.image = image
	if image == "" {
		f.imageLabel.Hide()
		f.clear.Hide()
	} else {
		f.imageLabel.SetText("Image: " + agent.IconSummary(image))
		f.imageLabel.Show()
		f.clear.Show()
		if f.entry.Text != "" {
			f.entry.SetText("")
		}
	}
	f.v.relayout()
}

// pickImage asks for an image file and reads it in the background.
func (f *iconField) pickImage() {
	a := f.v.app
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			f.hint.SetText("The image could not be opened: " + err.Error())
			return
		}
		if rc == nil {
			return // cancelled
		}
		name := rc.URI().Name()
		shown := f.v.shown
		a.background(func(context.Context) func() {
			defer rc.Close()
			icon, err := iconFromPicked(name, rc)
			return func() {
				if shown != f.v.shown {
					return // the editor moved to another agent
				}
				if err != nil {
					f.hint.SetText(agent.UserMessage(err))
					return
				}
				f.hint.SetText("")
				f.setImage(icon)
				f.v.changed()
			}
		})
	}, a.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".png", ".jpg", ".jpeg", ".svg"}))
	a.showDialog(d, nil)
}

// iconFromPicked reads a picked image file (at most one byte past the
// limit, so a large file is refused unread) and makes it an icon.
func iconFromPicked(name string, r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, agent.MaxIconImageBytes+1))
	if err != nil {
		return "", agent.Userf(err, "%s could not be read", name)
	}
	if len(data) > agent.MaxIconImageBytes {
		return "", agent.Userf(nil, "%s is over %d KiB: an icon image may be at most %d KiB; pick a smaller one", name, agent.MaxIconImageBytes>>10, agent.MaxIconImageBytes>>10)
	}
	return agent.IconFromFile(name, data)
}

// iconProblem checks an icon typed in the entry, as the core does on save.
func iconProblem(text string) string {
	if _, err := agent.CheckIcon(text); err != nil {
		return agent.UserMessage(err)
	}
	return ""
}

// splitIcon is an icon as the field shows it: text for the entry, or an
// image.
func splitIcon(icon string) (text, image string) {
	if agent.IconIsImage(icon) {
		return "", icon
	}
	return icon, ""
}

// iconOf is the icon of the field's entry and picked image: the image
// when there is one.
func iconOf(text, image string) string {
	if image != "" {
		return image
	}
	return text
}
