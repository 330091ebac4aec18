package desktop

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

func twoProviders() *fakeProviders {
	return &fakeProviders{
		providers: []agent.ProviderStatus{
			{Provider: agent.Provider{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:1234/v1"}, HasKey: true},
			{Provider: agent.Provider{Name: "ollama", Kind: agent.ProviderOllama}, UsedBy: []string{"assistant", "scribe"}},
		},
		models: map[string][]string{"ollama": {"llama3.2", "qwen3:8b", "gemma3"}},
	}
}

// row is the list's row i as drawn: its two labels and its buttons
// (Check, Edit, Remove).
func providerRow(v *modelsView, i int) (label, state *widget.Label, check, edit, remove *widget.Button) {
	o := v.list.CreateItem()
	v.list.UpdateItem(i, o)
	row := o.(*fyne.Container)
	texts := row.Objects[0].(*fyne.Container).Objects
	buttons := row.Objects[1].(*fyne.Container).Objects[0].(*fyne.Container).Objects
	return texts[0].(*widget.Label), texts[1].(*widget.Label),
		buttons[0].(*widget.Button), buttons[1].(*widget.Button), buttons[2].(*widget.Button)
}

func TestModelsListsAndChecksProviders(t *testing.T) {
	core := twoProviders()
	v, ui := modelsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.list.Length() != 2 {
		t.Fatalf("listed %d providers", v.list.Length())
	}
	label, _, _, _, _ := providerRow(v, 0)
	if want := "lmstudio · openai-compatible · http://127.0.0.1:1234/v1 · key set · no agent uses it"; label.Text != want {
		t.Errorf("row 0 = %q, want %q", label.Text, want)
	}
	label, state, check, _, _ := providerRow(v, 1)
	if state.Text != "" {
		t.Errorf("a status before any check: %q", state.Text)
	}
	if !strings.HasPrefix(label.Text, "ollama · ollama · default") || !strings.HasSuffix(label.Text, "no key · used by assistant, scribe") {
		t.Errorf("row 1 = %q", label.Text)
	}
	test.Tap(check)
	if _, state, _, _, _ = providerRow(v, 1); state.Text != "Asking ollama…" {
		t.Errorf("while checking: %q", state.Text)
	}
	ui.settle()
	if _, state, _, _, _ = providerRow(v, 1); state.Text != "● answers: 3 models" {
		t.Errorf("after the check: %q", state.Text)
	}
	_, _, check, _, _ = providerRow(v, 0)
	test.Tap(check)
	ui.settle()
	if _, state, _, _, _ = providerRow(v, 0); state.Text != "✖ cannot connect to provider lmstudio: connection refused" {
		t.Errorf("a failed check: %q", state.Text)
	}
	if v.listStatus.Text != "✖ Check of lmstudio: cannot connect to provider lmstudio: connection refused" {
		t.Errorf("the failed check in full, under the rows: %q", v.listStatus.Text)
	}
}

func TestModelsAddsAProviderWithItsKey(t *testing.T) {
	core := &fakeProviders{}
	v, ui := modelsScreen(t, core)
	if !v.key.Password {
		t.Error("the key field is not a password entry")
	}
	test.Type(v.name, "openai")
	v.kind.SetSelected(string(agent.ProviderOpenAI))
	if !strings.Contains(v.address.PlaceHolder, "https://api.openai.com/v1") {
		t.Errorf("placeholder for openai: %q", v.address.PlaceHolder)
	}
	v.kind.SetSelected(string(agent.ProviderOpenAICompatible))
	if !strings.Contains(v.address.PlaceHolder, "http://127.0.0.1:1234/v1") || !strings.Contains(v.address.PlaceHolder, "http://127.0.0.1:8000/v1") {
		t.Errorf("placeholder for openai-compatible: %q", v.address.PlaceHolder)
	}
	test.Tap(v.save) // an openai-compatible one needs an address: the core's refusal shows
	ui.settle()
	if !strings.Contains(v.status.Text, "Not saved: an OpenAI-compatible provider needs") {
		t.Errorf("refusal: %q", v.status.Text)
	}
	v.kind.SetSelected(string(agent.ProviderOpenAI))
	test.Type(v.key, "sk-secret")
	test.Tap(v.save)
	ui.settle()
	want := providerSave{agent.Provider{Name: "openai", Kind: agent.ProviderOpenAI}, agent.KeyChange{Set: true, Key: "sk-secret"}}
	if len(core.saves) != 2 {
		t.Fatalf("saves = %+v", core.saves)
	}
	if diff := cmp.Diff(want, core.saves[1]); diff != "" {
		t.Errorf("saved (-want +got):\n%s", diff)
	}
	if v.key.Text != "" {
		t.Error("the key stayed in the password entry after saving")
	}
	if v.status.Text != "Saved openai." || v.list.Length() != 1 || v.editing != "openai" || !v.name.Disabled() {
		t.Errorf("after saving: status %q, listed %d, editing %q", v.status.Text, v.list.Length(), v.editing)
	}
}

func TestModelsEditsKeepsOrRemovesTheKey(t *testing.T) {
	core := twoProviders()
	v, ui := modelsScreen(t, core)
	v.refresh()
	ui.settle()
	_, _, _, edit, _ := providerRow(v, 0)
	test.Tap(edit)
	if v.name.Text != "lmstudio" || !v.name.Disabled() || v.key.Text != "" || v.removeKey.Hidden ||
		v.key.PlaceHolder != "leave empty to keep the key" || v.address.Text != "http://127.0.0.1:1234/v1" {
		t.Fatalf("edit form: name %q (disabled %v), key %q, remove key hidden %v, placeholder %q, address %q",
			v.name.Text, v.name.Disabled(), v.key.Text, v.removeKey.Hidden, v.key.PlaceHolder, v.address.Text)
	}
	v.address.SetText("http://127.0.0.1:8080/v1")
	test.Tap(v.save)
	ui.settle()
	v.removeKeyOf("lmstudio")
	ui.settle()
	want := []providerSave{
		{agent.Provider{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8080/v1"}, agent.KeyChange{}},
		{agent.Provider{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8080/v1"}, agent.KeyChange{Set: true, Key: ""}},
	}
	if diff := cmp.Diff(want, core.saves); diff != "" {
		t.Errorf("saves (-want +got):\n%s", diff)
	}
	label, _, _, _, _ := providerRow(v, 0)
	if !strings.Contains(label.Text, "no key") || !v.removeKey.Hidden || v.status.Text != "Removed the key of lmstudio." {
		t.Errorf("after removing the key: row %q, remove key hidden %v, status %q", label.Text, v.removeKey.Hidden, v.status.Text)
	}
}

func TestModelsRemoveShowsTheRefusal(t *testing.T) {
	core := twoProviders()
	v, ui := modelsScreen(t, core)
	v.refresh()
	ui.settle()
	v.remove("ollama")
	ui.settle()
	if !strings.Contains(v.listStatus.Text, "Not removed: provider ollama is used by assistant, scribe") || v.list.Length() != 2 {
		t.Errorf("refusal: status %q, listed %d", v.listStatus.Text, v.list.Length())
	}
	_, _, _, edit, _ := providerRow(v, 0)
	test.Tap(edit)
	v.remove("lmstudio")
	ui.settle()
	if !cmp.Equal(core.deleted, []string{"lmstudio"}) || v.list.Length() != 1 || v.listStatus.Text != "Removed lmstudio." || v.editing != "" {
		t.Errorf("removed %v, listed %d, status %q, editing %q", core.deleted, v.list.Length(), v.listStatus.Text, v.editing)
	}
}

func TestCheckResult(t *testing.T) {
	for _, c := range []struct {
		n    int
		err  error
		want string
	}{
		{12, nil, "● answers: 12 models"},
		{1, nil, "● answers: 1 model"},
		{0, nil, "● answers, but lists no model"},
		{0, agent.Userf(nil, "no key"), "✖ no key"},
	} {
		if got := checkResult(c.n, c.err); got != c.want {
			t.Errorf("checkResult(%d, %v) = %q, want %q", c.n, c.err, got, c.want)
		}
	}
}
