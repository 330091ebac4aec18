package desktop

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

func editorProviders() *fakeProviders {
	return &fakeProviders{
		providers: []agent.ProviderStatus{
			{Provider: agent.Provider{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:1234/v1"}},
			{Provider: agent.Provider{Name: "ollama", Kind: agent.ProviderOllama}},
		},
		models: map[string][]string{"ollama": {"llama3.2", "qwen3:8b"}, "lmstudio": {"qwen3-coder"}},
		infos: map[string]agent.ModelInfo{
			"qwen3-coder": {Name: "qwen3-coder", Tools: agent.CapabilityYes, StructuredOutput: agent.CapabilityNo, ContextLength: 32768},
		},
	}
}

// TestEditorPicksAProviderAndItsModel: the editor lists the providers,
// lists a provider's models when it is picked, says what the model can do,
// and saves the provider, the model and where the agent runs.
func TestEditorPicksAProviderAndItsModel(t *testing.T) {
	providers := editorProviders()
	core := &fakeAgents{fakeProviders: providers}
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if !cmp.Equal(v.provider.Options, []string{"lmstudio", "ollama"}) || v.provider.Selected != "ollama" || v.runsOn.Selected != runsOnProvider {
		t.Fatalf("providers %v, selected %q, runs on %q", v.provider.Options, v.provider.Selected, v.runsOn.Selected)
	}
	if !cmp.Equal(v.modelNames, []string{"llama3.2", "qwen3:8b"}) || v.modelHint.Text != "ollama lists 2 models: pick one above." || v.pullButton.Hidden {
		t.Errorf("ollama's models: %v, hint %q, pull hidden %v", v.modelNames, v.modelHint.Text, v.pullButton.Hidden)
	}
	v.provider.SetSelected("lmstudio")
	if v.modelHint.Text != "Asking lmstudio for its models…" {
		t.Errorf("while asking: %q", v.modelHint.Text)
	}
	ui.settle()
	if !cmp.Equal(v.modelNames, []string{"qwen3-coder"}) || v.modelHint.Text != "lmstudio lists 1 model: pick it above." || !v.pullButton.Hidden {
		t.Errorf("lmstudio's models: %v, hint %q, pull hidden %v", v.modelNames, v.modelHint.Text, v.pullButton.Hidden)
	}
	v.model.SetText("qwen3-coder")
	ui.settle()
	if want := "calls tools: yes · structured output: no · context window: 32768 tokens"; v.capabilities.Text != want {
		t.Errorf("capabilities = %q, want %q", v.capabilities.Text, want)
	}
	v.model.SetText("my-own-model") // typed: the server did not list it
	ui.settle()
	if !strings.Contains(v.capabilities.Text, "lmstudio did not list my-own-model") {
		t.Errorf("an unlisted model: %q", v.capabilities.Text)
	}
	if !cmp.Equal(providers.describes, []string{"lmstudio/qwen3-coder"}) {
		t.Errorf("described %v", providers.describes)
	}
	test.Type(v.slug, "coder")
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 {
		t.Fatalf("saved %d; status %q", len(core.saved), v.status.Text)
	}
	got := core.saved[0]
	if got.Backend != agent.BackendProvider || got.Provider != "lmstudio" || got.Model != "my-own-model" {
		t.Errorf("saved backend %q, provider %q, model %q", got.Backend, got.Provider, got.Model)
	}
}

// TestEditorClientModel: an agent on the client's model says what that
// means, keeps its provider and model as the fallback, and saves so.
func TestEditorClientModel(t *testing.T) {
	core := &fakeAgents{fakeProviders: editorProviders()}
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if !v.clientNote.Hidden {
		t.Error("the client-model text shows for an agent on a provider")
	}
	v.edit(agent.Agent{ID: "a1", Slug: "helper", Backend: agent.BackendClient, Provider: "lmstudio", Model: "qwen3-coder"})
	ui.settle()
	if v.runsOn.Selected != runsOnClient || v.clientNote.Hidden || !strings.Contains(v.clientNote.Text, "through MCP sampling") ||
		!strings.Contains(v.clientNote.Text, "deprecates sampling") {
		t.Errorf("runs on %q, note hidden %v: %q", v.runsOn.Selected, v.clientNote.Hidden, v.clientNote.Text)
	}
	if v.provider.Selected != "lmstudio" || v.model.Text != "qwen3-coder" || !strings.HasPrefix(v.capabilities.Text, "calls tools: yes") {
		t.Errorf("fallback: provider %q, model %q, capabilities %q", v.provider.Selected, v.model.Text, v.capabilities.Text)
	}
	if !v.save.Disabled() {
		t.Error("Save is offered with nothing changed")
	}
	test.Type(v.description, "Helps.")
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 || core.saved[0].Backend != agent.BackendClient || core.saved[0].Provider != "lmstudio" || core.saved[0].Model != "qwen3-coder" {
		t.Errorf("saved %+v", core.saved)
	}
	v.runsOn.SetSelected(runsOnProvider)
	if !v.clientNote.Hidden {
		t.Error("the client-model text stays for a provider's model")
	}
	// An agent saved before providers runs on the provider "ollama".
	v.edit(agent.Agent{ID: "a2", Slug: "old", Backend: agent.BackendOllama, Model: "llama3.2"})
	ui.settle()
	// Its model is among those listed: no hint to pick one.
	if v.runsOn.Selected != runsOnProvider || v.provider.Selected != "ollama" || v.modelHint.Text != "" {
		t.Errorf("an old agent: runs on %q, provider %q, hint %q", v.runsOn.Selected, v.provider.Selected, v.modelHint.Text)
	}
}

// TestEditorLateModelsAreDropped: models that arrive for a provider no
// longer picked do not fill the picker.
func TestEditorLateModelsAreDropped(t *testing.T) {
	providers := editorProviders()
	v, ui := agentsScreen(t, &fakeAgents{fakeProviders: providers})
	v.refresh()
	ui.settle()
	providers.hold, providers.gate = "lmstudio", make(chan struct{})
	v.provider.SetSelected("lmstudio") // its server is slow
	v.provider.SetSelected("ollama")
	ui.waitQueued(1) // ollama's models are in
	close(providers.gate)
	ui.settle() // then lmstudio's
	if v.modelsOf != "ollama" || !cmp.Equal(v.modelNames, []string{"llama3.2", "qwen3:8b"}) {
		t.Errorf("picker lists %v of %q", v.modelNames, v.modelsOf)
	}
}

// TestModelsChangeReachesTheEditor: a provider added in Settings → Models
// is offered in the agent editor.
func TestModelsChangeReachesTheEditor(t *testing.T) {
	core := newFakeCore(fakeCore{fakeProviders: editorProviders()})
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	test.Type(a.models.name, "vllm")
	a.models.address.SetText("http://127.0.0.1:8000/v1")
	test.Tap(a.models.save)
	ui.settle()
	if !cmp.Equal(a.agents.provider.Options, []string{"lmstudio", "ollama", "vllm"}) {
		t.Errorf("the editor offers %v", a.agents.provider.Options)
	}
	// An edited provider's models are asked for again.
	a.agents.provider.SetSelected("lmstudio")
	ui.settle()
	core.fakeProviders.mu.Lock()
	core.fakeProviders.models["lmstudio"] = []string{"qwen3-coder", "devstral"}
	core.fakeProviders.mu.Unlock()
	a.models.edit(a.models.providers[0])
	test.Tap(a.models.save)
	ui.settle()
	if !cmp.Equal(a.agents.modelNames, []string{"qwen3-coder", "devstral"}) {
		t.Errorf("after editing lmstudio the picker lists %v", a.agents.modelNames)
	}
}

// TestProvidersChangedElsewhere: a provider added on the command line
// reaches Settings → Models and the agent editor when the core says so.
func TestProvidersChangedElsewhere(t *testing.T) {
	core := newFakeCore(fakeCore{fakeProviders: editorProviders()})
	a, ui := newTestApp(t, core.asCore())
	a.refresh()
	ui.settle()
	if _, err := core.fakeProviders.Save(t.Context(), agent.Provider{Name: "vllm", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:8000/v1"}, agent.KeyChange{}); err != nil {
		t.Fatal(err)
	}
	a.handle(agent.Event{Kind: agent.EventProvidersChanged, Text: "vllm"})
	ui.settle()
	if !cmp.Equal(a.agents.provider.Options, []string{"lmstudio", "ollama", "vllm"}) || a.models.list.Length() != 3 {
		t.Errorf("after the event: the editor offers %v, Models lists %d", a.agents.provider.Options, a.models.list.Length())
	}
}
