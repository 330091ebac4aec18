package openaitest

import (
	"cmp"
	"net/http"
)

// LM Studio's native listings, as documented in lmstudio-ai/docs:
// 1_developer/2_rest/list.md (GET /api/v1/models, LM Studio 0.4) and
// 1_developer/2_rest/endpoints.md (GET /api/v0/models, 0.3.6).

type lmsV1Model struct {
	Type             string        `json:"type"`
	Publisher        string        `json:"publisher"`
	Key              string        `json:"key"`
	DisplayName      string        `json:"display_name"`
	Architecture     string        `json:"architecture,omitempty"`
	LoadedInstances  []lmsInstance `json:"loaded_instances"`
	MaxContextLength int           `json:"max_context_length"`
	Format           string        `json:"format"`
	Capabilities     *lmsCaps      `json:"capabilities,omitempty"`
}

type lmsInstance struct {
	ID     string `json:"id"`
	Config struct {
		ContextLength int `json:"context_length"`
	} `json:"config"`
}

type lmsCaps struct {
	Vision            bool `json:"vision"`
	TrainedForToolUse bool `json:"trained_for_tool_use"`
}

type lmsV0Model struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Type              string   `json:"type"`
	Publisher         string   `json:"publisher"`
	Arch              string   `json:"arch"`
	CompatibilityType string   `json:"compatibility_type"`
	Quantization      string   `json:"quantization"`
	State             string   `json:"state"`
	MaxContextLength  int      `json:"max_context_length"`
	Capabilities      []string `json:"capabilities,omitempty"`
}

func (m LMStudioModel) typ() string { return cmp.Or(m.Type, "llm") }

func (m LMStudioModel) v1() lmsV1Model {
	out := lmsV1Model{
		Type: m.typ(), Publisher: "lmstudio-community", Key: m.ID, DisplayName: m.ID,
		Architecture: "llama", MaxContextLength: m.MaxContextLength, Format: "gguf",
	}
	if out.Type == "vlm" {
		out.Type = "llm"
	}
	out.LoadedInstances = []lmsInstance{}
	if m.LoadedContextLength > 0 {
		inst := lmsInstance{ID: m.ID}
		inst.Config.ContextLength = m.LoadedContextLength
		out.LoadedInstances = append(out.LoadedInstances, inst)
	}
	if out.Type == "llm" {
		out.Capabilities = &lmsCaps{Vision: m.Type == "vlm", TrainedForToolUse: m.ToolUse}
	}
	return out
}

func (m LMStudioModel) v0() lmsV0Model {
	out := lmsV0Model{
		ID: m.ID, Object: "model", Type: m.typ(), Publisher: "lmstudio-community", Arch: "llama",
		CompatibilityType: "gguf", Quantization: "Q4_K_M", State: "not-loaded", MaxContextLength: m.MaxContextLength,
	}
	if m.LoadedContextLength > 0 {
		out.State = "loaded"
	}
	if m.ToolUse {
		out.Capabilities = []string{"tool_use"}
	}
	return out
}

func (f *fake) lmsV1(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Models []lmsV1Model `json:"models"`
	}{Models: []lmsV1Model{}}
	for _, m := range f.cfg.lmstudio {
		list.Models = append(list.Models, m.v1())
	}
	writeJSON(w, http.StatusOK, list)
}

func (f *fake) lmsV0List(w http.ResponseWriter, r *http.Request) {
	list := struct {
		Object string       `json:"object"`
		Data   []lmsV0Model `json:"data"`
	}{Object: "list", Data: []lmsV0Model{}}
	for _, m := range f.cfg.lmstudio {
		list.Data = append(list.Data, m.v0())
	}
	writeJSON(w, http.StatusOK, list)
}

func (f *fake) lmsV0Get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, m := range f.cfg.lmstudio {
		if m.ID == id {
			writeJSON(w, http.StatusOK, m.v0())
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "Model " + id + " not found"})
}
