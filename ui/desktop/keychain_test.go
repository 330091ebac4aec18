package desktop

import (
	"strings"
	"testing"
)

// TestSecretsSayWhereTheyGo: where a secret is typed (a model server's
// key, a tool server's secrets) and in Settings, the window says the
// keychain keeps it, or, without a keychain, what happens instead.
func TestSecretsSayWhereTheyGo(t *testing.T) {
	const problem = "the OS keychain is not available (no Secret Service): secrets will be kept in plain text in /d/secrets.json (mode 0600). Start a keyring."
	for _, tc := range []struct {
		name, problem, want, notWant string
	}{
		{"a keychain", "", "Kept in the system keychain", "plain text"},
		{"none", problem, "⚠ The OS keychain is not available (no Secret Service): secrets will be kept in plain text in /d/secrets.json", "Kept in the system keychain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, u := newShell(t)
			a.opts.KeychainProblem = tc.problem
			core := newFakeCore(fakeCore{}).asCore()

			models := newModelsView(a, core)
			a.win.SetContent(models.content())
			models.add()
			if got := models.keyHint.Text; !strings.Contains(got, tc.want) || strings.Contains(got, tc.notWant) {
				t.Errorf("a model server's key: %q, want %q", got, tc.want)
			}

			servers := newToolServersView(a, core)
			a.win.SetContent(servers.content())
			servers.showAdd()
			u.settle()
			got := labelTexts(t, a.win.Canvas().Overlays().Top())
			if want := strings.Replace(tc.want, "Kept in the system keychain", "Secrets are kept in the system keychain", 1); !strings.Contains(got, want) {
				t.Errorf("a tool server's secrets: %q, want %q", got, want)
			}

			settings := newSettingsView(a, core)
			page := settings.content()
			if has := strings.Contains(labelTexts(t, page), "plain text"); has != (tc.problem != "") {
				t.Errorf("Settings warns of plain text: %v, want %v", has, tc.problem != "")
			}
		})
	}
}
