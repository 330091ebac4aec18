package desktop

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
)

// modelsView is Settings → Models: the providers, each with its check,
// and a form that adds or edits one. The API key typed there goes to the
// core once and leaves the widget when saved; it is never shown again.
type modelsView struct {
	app       *App
	core      Core
	providers []agent.ProviderStatus
	checked   map[string]string // the last Check of each provider, by name
	list      *widget.List

	editing         string // the provider in the form; "" while adding one
	name, address   *widget.Entry
	key             *widget.Entry // a password entry
	kind            *widget.Select
	keyHint, status *widget.Label // status: the form's feedback, under Save
	listStatus      *widget.Label // the rows' feedback (Check, Remove), under the list
	save, removeKey *widget.Button
	formTitle       *widget.Label
	// changed, when set, runs after a provider is saved or removed (the
	// App's: the agent editor re-reads the providers).
	changed func()
}

func newModelsView(app *App, core Core) *modelsView {
	v := &modelsView{app: app, core: core, checked: map[string]string{},
		name: widget.NewEntry(), address: widget.NewEntry(), key: widget.NewPasswordEntry(),
		keyHint: widget.NewLabel(""), status: widget.NewLabel(""), formTitle: widget.NewLabel(""), listStatus: feedback()}
	v.status.Wrapping = fyne.TextWrapWord
	v.keyHint.Wrapping = fyne.TextWrapWord
	kinds := make([]string, len(agent.ProviderKinds))
	for i, k := range agent.ProviderKinds {
		kinds[i] = string(k)
	}
	v.kind = widget.NewSelect(kinds, func(k string) { v.address.SetPlaceHolder(addressPlaceholder(agent.ProviderKind(k))) })
	v.name.SetPlaceHolder("a name, e.g. lmstudio")
	v.save = widget.NewButton("Save", v.saveForm)
	v.save.Importance = widget.HighImportance
	v.removeKey = widget.NewButton("Remove key…", v.confirmRemoveKey)
	v.list = widget.NewList(
		func() int { return len(v.providers) },
		func() fyne.CanvasObject {
			label, state := widget.NewLabel("provider"), widget.NewLabel("")
			// One line each, so that every row has room for its check.
			label.Truncation, state.Truncation = fyne.TextTruncateEllipsis, fyne.TextTruncateEllipsis
			return container.NewBorder(nil, nil, nil,
				container.NewCenter(container.NewHBox(widget.NewButton("Check", nil), widget.NewButton("Edit", nil), widget.NewButton("Remove…", nil))),
				container.NewVBox(label, state))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container)
			p := v.providers[i]
			texts := row.Objects[0].(*fyne.Container).Objects
			texts[0].(*widget.Label).SetText(providerLabel(p))
			texts[1].(*widget.Label).SetText(v.checked[p.Name])
			buttons := row.Objects[1].(*fyne.Container).Objects[0].(*fyne.Container).Objects
			buttons[0].(*widget.Button).OnTapped = func() { v.check(p.Name) }
			buttons[1].(*widget.Button).OnTapped = func() { v.edit(p) }
			buttons[2].(*widget.Button).OnTapped = func() { v.confirmRemove(p.Name) }
		})
	v.add()
	return v
}

func (v *modelsView) content() fyne.CanvasObject {
	add := widget.NewButton("Add a model server", v.add)
	intro := widget.NewLabel("Model servers: where your agents' models run. Check asks a server which models it has. Changes apply at once.")
	intro.Wrapping = fyne.TextWrapWord
	top := container.NewBorder(intro, container.NewBorder(nil, nil, nil, add, v.listStatus), nil, nil, v.list)
	form := widget.NewForm(
		widget.NewFormItem("Name", v.name),
		widget.NewFormItem("Kind", v.kind),
		widget.NewFormItem("Address", v.address),
		widget.NewFormItem("API key", container.NewVBox(container.NewBorder(nil, nil, nil, v.removeKey, v.key), v.keyHint)),
	)
	bottom := container.NewVBox(v.formTitle, form, container.NewBorder(nil, nil, v.save, nil, v.status))
	split := container.NewVSplit(top, container.NewVScroll(bottom))
	split.Offset = 0.5
	return split
}

// refresh re-reads the providers off fyne's goroutine: Providers asks the
// keychain whether each has a key.
func (v *modelsView) refresh() {
	v.app.background(func(context.Context) func() {
		ps := v.core.Providers.List()
		return func() {
			v.providers = ps
			v.shown()
		}
	})
}

// shown draws the providers just read, here and in Settings' summary.
func (v *modelsView) shown() {
	v.list.Refresh()
	if v.app.settings != nil {
		v.app.settings.showProviders(v.providers)
	}
}

// add empties the form for a new provider.
func (v *modelsView) add() {
	v.editing = ""
	v.formTitle.SetText("Add a model server")
	v.name.SetText("")
	v.name.Enable()
	v.kind.SetSelected(string(agent.ProviderOpenAICompatible))
	v.address.SetText("")
	v.key.SetText("")
	v.key.SetPlaceHolder("API key, if the server needs one")
	v.keyHint.SetText(v.app.keptNote("Kept in the system keychain; never shown again."))
	v.removeKey.Hide()
	v.status.SetText("")
}

// edit shows a provider in the form; its name is fixed, and its key field
// starts empty (empty keeps the key).
func (v *modelsView) edit(p agent.ProviderStatus) {
	v.editing = p.Name
	v.formTitle.SetText("Edit the model server " + p.Name)
	v.name.SetText(p.Name)
	v.name.Disable()
	v.kind.SetSelected(string(p.Kind))
	v.address.SetText(p.BaseURL)
	v.key.SetText("")
	if p.HasKey {
		v.key.SetPlaceHolder("leave empty to keep the key")
		v.keyHint.SetText(v.app.keptNote("A key is set, kept in the system keychain. Type a new one to replace it."))
		v.removeKey.Show()
	} else {
		v.key.SetPlaceHolder("API key, if the server needs one")
		v.keyHint.SetText("No key is set.")
		v.removeKey.Hide()
	}
	v.status.SetText("")
}

// saveForm sends the form to the core, off fyne's goroutine: the key only
// when one was typed (else it keeps the one in the keychain).
func (v *modelsView) saveForm() {
	p := agent.Provider{Name: strings.TrimSpace(v.name.Text), Kind: agent.ProviderKind(v.kind.Selected), BaseURL: strings.TrimSpace(v.address.Text)}
	if v.editing != "" {
		p.Name = v.editing
	}
	var key agent.KeyChange
	if v.key.Text != "" {
		key = agent.KeyChange{Set: true, Key: v.key.Text}
	}
	v.saveProvider(p, key, "Saved "+p.Name+".")
}

// confirmRemoveKey asks before removing the API key of the provider in
// the form.
func (v *modelsView) confirmRemoveKey() {
	name := v.editing
	v.app.showDialog(dialog.NewCustomConfirm("Remove the key of "+name+"?", "Remove key", "Cancel",
		plainNote("Deskhand removes the API key of "+name+" from the system keychain. Its server may then refuse the agents that run on it."),
		func(ok bool) {
			if ok {
				v.removeKeyOf(name)
			}
		}, v.app.win), nil)
}

// removeKeyOf removes a provider's API key, keeping the rest as saved.
func (v *modelsView) removeKeyOf(name string) {
	i := slices.IndexFunc(v.providers, func(p agent.ProviderStatus) bool { return p.Name == name })
	if i < 0 {
		v.status.SetText("No model server named " + name + ".")
		return
	}
	v.saveProvider(v.providers[i].Provider, agent.KeyChange{Set: true}, "Removed the key of "+name+".")
}

func (v *modelsView) saveProvider(p agent.Provider, key agent.KeyChange, done string) {
	v.status.SetText("Saving " + p.Name + "…")
	v.save.Disable()
	v.app.background(func(ctx context.Context) func() {
		saved, err := v.core.Providers.Save(ctx, p, key)
		var ps []agent.ProviderStatus
		if err == nil {
			ps = v.core.Providers.List()
		}
		return func() {
			v.save.Enable()
			if err != nil {
				v.status.SetText("✖ Not saved: " + agent.UserMessage(err))
				return
			}
			v.providers = ps
			delete(v.checked, saved.Name) // a new address or key: check again
			v.shown()
			if i := slices.IndexFunc(ps, func(s agent.ProviderStatus) bool { return s.Name == saved.Name }); i >= 0 {
				v.edit(ps[i]) // empties the key field
			} else {
				v.key.SetText("")
			}
			v.status.SetText(done)
			if v.changed != nil {
				v.changed()
			}
		}
	})
}

// check asks a provider's server for its models now.
func (v *modelsView) check(name string) {
	v.checked[name] = "Asking " + name + "…"
	v.list.Refresh()
	v.app.background(func(ctx context.Context) func() {
		names, err := v.core.Providers.Models(ctx, name)
		return func() {
			v.checked[name] = checkResult(len(names), err)
			v.list.Refresh()
			if err != nil { // in full, under the rows: a row has one line
				say(v.listStatus, "✖ Check of "+name+": "+agent.UserMessage(err))
			} else if strings.HasPrefix(v.listStatus.Text, "✖ Check of "+name+":") {
				say(v.listStatus, "")
			}
		}
	})
}

// confirmRemove asks before removing a provider.
func (v *modelsView) confirmRemove(name string) {
	v.app.showDialog(dialog.NewCustomConfirm("Remove "+name+"?", "Remove model server", "Cancel",
		plainNote("Deskhand forgets the model server "+name+" and its API key. Agents that run on it must move to another one first."),
		func(ok bool) {
			if ok {
				v.remove(name)
			}
		}, v.app.win), nil)
}

// remove removes a provider off fyne's goroutine; the core refuses while
// agents use it, and says which.
func (v *modelsView) remove(name string) {
	say(v.listStatus, "Removing "+name+"…")
	v.app.background(func(ctx context.Context) func() {
		err := v.core.Providers.Delete(ctx, name)
		var ps []agent.ProviderStatus
		if err == nil {
			ps = v.core.Providers.List()
		}
		return func() {
			if err != nil {
				say(v.listStatus, "✖ Not removed: "+agent.UserMessage(err))
				return
			}
			v.providers = ps
			delete(v.checked, name)
			v.shown()
			if v.editing == name {
				v.add()
			}
			say(v.listStatus, "Removed "+name+".")
			if v.changed != nil {
				v.changed()
			}
		}
	})
}

// providerLabel is a provider's line in Settings → Models.
func providerLabel(p agent.ProviderStatus) string {
	addr := p.BaseURL
	if addr == "" {
		addr = "default"
		if p.Kind == agent.ProviderOllama {
			addr = "default (Ollama's address, in Settings → Advanced)"
		}
	}
	key := "no key"
	if p.HasKey {
		key = "key set"
	}
	used := "no agent uses it"
	if len(p.UsedBy) > 0 {
		used = "used by " + strings.Join(p.UsedBy, ", ")
	}
	return fmt.Sprintf("%s · %s · %s · %s · %s", p.Name, p.Kind, addr, key, used)
}

// addressPlaceholder suggests the address of a kind's server.
func addressPlaceholder(k agent.ProviderKind) string {
	switch k {
	case agent.ProviderOpenAICompatible:
		return "LM Studio http://127.0.0.1:1234/v1, llama.cpp http://127.0.0.1:8080/v1, vLLM http://127.0.0.1:8000/v1"
	case agent.ProviderOllama:
		return "default: Ollama's address in Settings → Advanced, OLLAMA_HOST or http://127.0.0.1:11434"
	case agent.ProviderOpenAI:
		return "default: https://api.openai.com/v1"
	case agent.ProviderAnthropic:
		return "default: https://api.anthropic.com"
	}
	return ""
}

// checkResult says what a provider's server answered.
func checkResult(models int, err error) string {
	switch {
	case err != nil:
		return "✖ " + agent.UserMessage(err)
	case models == 0:
		return "● answers, but lists no model"
	case models == 1:
		return "● answers: 1 model"
	}
	return fmt.Sprintf("● answers: %d models", models)
}
