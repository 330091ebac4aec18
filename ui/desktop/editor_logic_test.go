package desktop

import (
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

func TestSlugFromName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"Researcher", "researcher"},
		{"Trip Planner!", "trip-planner"},
		{"  My  notes -- 2026 ", "my-notes-2026"},
		{"snake_case ok", "snake_case-ok"},
		{"Café crème", "caf-cr-me"},
		{"_hidden", "hidden"},
		{"日本", ""},
		{"", ""},
		{strings.Repeat("a", 70), strings.Repeat("a", 64)},
		{strings.Repeat("a", 63) + " b", strings.Repeat("a", 63)},
	} {
		got := slugFromName(c.name)
		if got != c.want {
			t.Errorf("slugFromName(%q) = %q, want %q", c.name, got, c.want)
		}
		if got != "" && agent.CheckSlug(got) != nil {
			t.Errorf("slugFromName(%q) = %q, which CheckSlug refuses", c.name, got)
		}
	}
}

func TestFieldsChanged(t *testing.T) {
	base := fieldsOf(agent.Agent{Name: "A", Slug: "a", Folders: []string{"/x", "/y"}, Tools: []agent.AgentTool{{Name: "read_file"}},
		ResponseSchema: []byte(`{"type":"object"}`), Enabled: true})
	for _, c := range []struct {
		name string
		edit func(*editorFields)
		want bool
	}{
		{"nothing", func(*editorFields) {}, false},
		{"a blank line in a list", func(f *editorFields) { f.Folders += "\n\n" }, false},
		{"spaces around the schema", func(f *editorFields) { f.Schema = " " + f.Schema + "\n" }, false},
		{"the name", func(f *editorFields) { f.Name = "B" }, true},
		{"a folder", func(f *editorFields) { f.Folders = "/x" }, true},
		{"a tool's approval", func(f *editorFields) { f.Tools = []agent.AgentTool{{Name: "read_file", NeedsApproval: true}} }, true},
		{"no tool", func(f *editorFields) { f.Tools = nil }, true},
		{"enabled", func(f *editorFields) { f.Enabled = false }, true},
		{"routing", func(f *editorFields) { f.Routing = agent.RouteDesktop }, true},
		{"the model", func(f *editorFields) { f.Model = "llama3.2" }, true},
		{"keeping arguments in the log", func(f *editorFields) { f.LogArguments = true }, true},
	} {
		now := base
		now.Tools = append([]agent.AgentTool(nil), base.Tools...)
		c.edit(&now)
		if got := fieldsChanged(base, now); got != c.want {
			t.Errorf("%s: changed = %v, want %v", c.name, got, c.want)
		}
	}
	// No routing reads as the core's default: nothing changed.
	if fieldsOf(agent.Agent{}).Routing != agent.RouteClient {
		t.Error("an agent without routing does not read as routed to the client")
	}
}

func TestRoutingWords(t *testing.T) {
	for _, r := range []agent.Routing{agent.RouteClient, agent.RouteDesktop, agent.RouteDecline} {
		if got := routingOf(routingWord(r)); got != r {
			t.Errorf("%q reads %q, which is %q", r, routingWord(r), got)
		}
	}
	if routingWord(agent.RouteClient) != "you and the calling client: the first answer counts" ||
		routingWord(agent.RouteDesktop) != "only you, on this computer" || routingWord(agent.RouteDecline) != "nobody: the turn fails" {
		t.Errorf("words: %v", routingChoices())
	}
	if routingWord("") != routingWord(agent.RouteClient) {
		t.Error("no routing does not read as the default")
	}
}

func TestEditorTexts(t *testing.T) {
	for i, c := range []struct{ got, want string }{
		{providerModelsFound("ollama", true, 0), "ollama has no model installed: type a name, such as llama3.2, and press Pull (or run: ollama pull llama3.2)."},
		{providerModelsFound("nas", true, 0), "nas has no model installed: on that computer, run: ollama pull llama3.2; then press Refresh."},
		{providerModelsFound("lmstudio", false, 0), "lmstudio lists no model: load one in lmstudio, then press Refresh, or type a model's name."},
		{providerModelsFound("ollama", true, 1), "ollama lists 1 model: pick it above."},
		{providerModelsFound("ollama", true, 3), "ollama lists 3 models: pick one above."},
		{noModelWarning(editorFields{Backend: agent.BackendProvider}), "No model picked: clients calling this agent get an error until you pick one."},
		{noModelWarning(editorFields{Backend: agent.BackendProvider, Model: "llama3.2"}), ""},
		{noModelWarning(editorFields{Backend: agent.BackendClient}), ""},
		{editorHeading(agent.Agent{}, false), "New agent"},
		{editorHeading(agent.Agent{ID: "1", Slug: "a", Name: "Alpha"}, true), "Alpha (a) — unsaved changes"},
		{foldersProblem("/home/ada\n\n~/notes"), ""},
		{hostsProblem("nas.local:8080\n[fd00::5]:80"), ""},
	} {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
	if !strings.Contains(foldersProblem("/ok\nnotes"), `"notes" is not a full path`) {
		t.Error(foldersProblem("/ok\nnotes"))
	}
	if !strings.Contains(hostsProblem("nas.local"), `"nas.local" is not a host and port`) {
		t.Error(hostsProblem("nas.local"))
	}
}

func TestTryTranscripts(t *testing.T) {
	tr := tryTranscripts{}
	tr.start("a1", "hi")
	if got := tr.text("a1", "helper"); got != "You: hi\nhelper: …" {
		t.Errorf("waiting: %q", got)
	}
	tr.stream("a1", "hel")
	tr.stream("a1", "lo")
	if got := tr.text("a1", "helper"); got != "You: hi\nhelper: hello" {
		t.Errorf("streaming: %q", got)
	}
	tr.finish("a1", "hello!")
	tr.stream("a1", "late")
	if got := tr.text("a1", "helper"); got != "You: hi\nhelper: hello!" || tr.text("a2", "x") != "" {
		t.Errorf("done: %q", got)
	}
	for i := range 12 {
		tr.start("a1", strings.Repeat("m", i+1))
		tr.finish("a1", "ok")
	}
	if n := len(tr["a1"]); n != maxTryExchanges || tr["a1"][0].Message != "mmm" {
		t.Errorf("kept %d, oldest %q", n, tr["a1"][0].Message)
	}
}

func TestTextRows(t *testing.T) {
	measure := func(s string) float32 { return float32(len(s)) * 10 }
	for _, c := range []struct {
		text  string
		width float32
		want  int
	}{
		{"", 100, 1},
		{"a\nb\nc", 0, 3},
		{strings.Repeat("x", 25), 100, 3},
		{strings.Repeat("x", 10) + "\n", 100, 2},
	} {
		if got := textRows(c.text, c.width, measure); got != c.want {
			t.Errorf("textRows(%q, %v) = %d, want %d", c.text, c.width, got, c.want)
		}
	}
}
