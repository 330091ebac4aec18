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

func TestEffectNote(t *testing.T) {
	const flag = "(set by a flag or the environment)"
	for _, c := range []struct {
		key, stored, now string
		known, here      bool
		want             string
	}{
		{"server.addr", "", "127.0.0.1:7345", true, false, ""},               // the default
		{"server.addr", "127.0.0.1:9000", "127.0.0.1:9000", true, false, ""}, // as stored
		{"server.addr", "127.0.0.1:9000", "127.0.0.1:8000", true, false, "In effect now: 127.0.0.1:8000 " + flag},
		{"server.addr", "", "127.0.0.1:8000", true, false, "In effect now: 127.0.0.1:8000 " + flag},
		{"server.addr", "127.0.0.1:9000", "127.0.0.1:8000", true, true, "In effect now: 127.0.0.1:8000 (what you saved applies from the next start)."},
		{"ollama.host", "", "http://127.0.0.1:11434", true, false, ""},
		{"ollama.host", "", "http://gpu-box:11434", true, false, "In effect now: http://gpu-box:11434 " + flag}, // --ollama or OLLAMA_HOST
		{"server.insecure_no_auth", "", "false", true, false, ""},
		{"server.insecure_no_auth", "false", "true", true, false, "In effect now: on " + flag},
		{"server.insecure_no_auth", "true", "true", true, false, ""},
		{"server.title", "x", "", false, false, ""}, // not known: nothing said
	} {
		got := effectNote(c.key, c.stored, c.now, c.known, c.here)
		if c.want != "" && !strings.HasPrefix(got, c.want) || c.want == "" && got != "" {
			t.Errorf("effectNote(%q, %q, %q, %v, %v) = %q, want %q", c.key, c.stored, c.now, c.known, c.here, got, c.want)
		}
	}
}

func TestFieldNote(t *testing.T) {
	if note, wrong := fieldNote("", ""); note != "Applies at the next start." || wrong {
		t.Errorf("plain: %q %v", note, wrong)
	}
	if note, wrong := fieldNote("", "In effect now: on."); note != "In effect now: on. Applies at the next start." || wrong {
		t.Errorf("in effect: %q %v", note, wrong)
	}
	if note, wrong := fieldNote("bad", "In effect now: on."); note != "bad" || !wrong {
		t.Errorf("a problem: %q %v", note, wrong)
	}
	for text, ok := range map[string]bool{"": true, "50": true, " 7 ": true, "0": false, "-1": false, "many": false} {
		if (pageSizeProblem(text) == "") != ok {
			t.Errorf("pageSizeProblem(%q) = %q", text, pageSizeProblem(text))
		}
	}
}

func TestModelServersSummary(t *testing.T) {
	if got := modelServersSummary(nil); !strings.HasPrefix(got, "No model server yet") {
		t.Errorf("none: %q", got)
	}
	ps := []agent.ProviderStatus{{Provider: agent.Provider{Name: "ollama"}}, {Provider: agent.Provider{Name: "lmstudio"}}}
	if got := modelServersSummary(ps); !strings.HasPrefix(got, "2 model servers: ollama, lmstudio.") || !strings.Contains(got, "at once") {
		t.Errorf("two: %q", got)
	}
	if got := modelServersSummary(ps[:1]); !strings.HasPrefix(got, "1 model server: ollama.") {
		t.Errorf("one: %q", got)
	}
}

// TestSettingsShowsWhatIsInEffect: a flag's address is said next to the
// stored one, Advanced starts collapsed, and everyday settings come first.
func TestSettingsShowsWhatIsInEffect(t *testing.T) {
	core := &fakeSettings{settings: map[string]string{"server.addr": "127.0.0.1:9000"}}
	v, ui := settingsScreen(t, core)
	v.app.opts.InEffect = map[string]string{"server.addr": "127.0.0.1:8000", "ollama.host": "http://gpu-box:11434", "server.insecure_no_auth": "false"}
	v.refresh()
	ui.settle()
	if got := v.notes["server.addr"].Text; !strings.Contains(got, "In effect now: 127.0.0.1:8000 (set by a flag or the environment)") || !strings.Contains(got, "next start") {
		t.Errorf("address note = %q", got)
	}
	if got := v.notes["ollama.host"].Text; !strings.Contains(got, "http://gpu-box:11434") || v.entries["ollama.host"].Text != "" {
		t.Errorf("Ollama's note = %q, field %q", got, v.entries["ollama.host"].Text)
	}
	if got := v.notes["server.insecure_no_auth"].Text; got != "Applies at the next start." {
		t.Errorf("insecure note = %q", got)
	}
	// Saved here, the note says why the value in effect differs.
	v.entries["server.addr"].SetText("127.0.0.1:9100")
	v.save()
	ui.settle()
	if got := v.notes["server.addr"].Text; !strings.Contains(got, "what you saved applies from the next start") {
		t.Errorf("after saving: %q", got)
	}

	if len(v.advanced.Items) != 1 || v.advanced.Items[0].Title != "Advanced" || v.advanced.Items[0].Open {
		t.Error("Advanced is not one section, collapsed")
	}
	var order []string
	walk(t, v.app.win.Content(), func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.Label); ok && l.TextStyle.Bold {
			order = append(order, l.Text)
		}
		_, acc := o.(*widget.Accordion)
		if acc {
			order = append(order, "Advanced")
		}
		return acc
	})
	if want := []string{"Model servers", "Start at login", "Client tokens", "Advanced"}; !cmp.Equal(order, want) {
		t.Errorf("sections %v, want %v", order, want)
	}
}

// TestRevokingATokenAsksFirst: the row's Revoke asks, naming the action;
// Cancel leaves the token.
func TestRevokingATokenAsksFirst(t *testing.T) {
	core := &fakeSettings{clients: []agent.Client{{ID: "1", Name: "cursor"}}}
	v, ui := settingsScreen(t, core)
	v.app.win.Resize(fyne.NewSize(800, 600))
	v.refresh()
	ui.settle()
	revoke := buttons(t, v.clientRows)["Revoke…"]
	test.Tap(revoke)
	top := v.app.win.Canvas().Overlays().Top()
	if top == nil || buttons(t, top)["Revoke token"] == nil {
		t.Fatal("no question before revoking")
	}
	test.Tap(buttons(t, top)["Cancel"])
	ui.settle()
	if len(core.revoked) != 0 {
		t.Fatalf("revoked on Cancel: %v", core.revoked)
	}
	test.Tap(revoke)
	test.Tap(buttons(t, v.app.win.Canvas().Overlays().Top())["Revoke token"])
	ui.settle()
	if !cmp.Equal(core.revoked, []string{"cursor"}) || !strings.Contains(v.tokenStatus.Text, "Revoked") {
		t.Errorf("revoked %v, status %q", core.revoked, v.tokenStatus.Text)
	}
	test.Tap(buttons(t, v.clientRows)["Rotate…"])
	test.Tap(buttons(t, v.app.win.Canvas().Overlays().Top())["Rotate token"])
	ui.settle()
	if !cmp.Equal(core.rotated, []string{"cursor"}) {
		t.Errorf("rotated %v", core.rotated)
	}
}

// TestSettingsSummarisesTheModelServers: the summary follows Settings →
// Models, and its button leads there.
func TestSettingsSummarisesTheModelServers(t *testing.T) {
	a, ui := newTestApp(t, newFakeCore(fakeCore{fakeProviders: twoProviders()}).asCore())
	a.refresh()
	ui.settle()
	if got := a.settings.servers.Text; !strings.HasPrefix(got, "2 model servers: lmstudio, ollama.") {
		t.Errorf("summary = %q", got)
	}
	a.models.remove("lmstudio")
	ui.settle()
	if got := a.settings.servers.Text; !strings.HasPrefix(got, "1 model server: ollama.") {
		t.Errorf("after removing one: %q", got)
	}
	a.settings.showModels()
	inner := a.settingsTabs
	if a.tabs.SelectedIndex() != tabSettings || inner.Selected().Text != "Models" {
		t.Errorf("Manage model servers opened tab %d, %q", a.tabs.SelectedIndex(), inner.Selected().Text)
	}
}
