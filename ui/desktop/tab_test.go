package desktop

import (
	"testing"

	"fyne.io/fyne/v2"
)

// TestTabLeavesMultiLineFields: the window hands Tab to a field that
// accepts it (fyne's multi-line Entry types a tab) and otherwise moves
// the focus on; the editor's fields and the answer fields do not take it.
func TestTabLeavesMultiLineFields(t *testing.T) {
	a, _ := newTestApp(t, newFakeCore(fakeCore{}).asCore())
	for name, f := range map[string]fyne.Tabbable{
		"the instructions": a.agents.prompt,
		"starter prompts":  a.agents.starters,
		"an answer":        newSendEntry(),
	} {
		if f.AcceptsTab() {
			t.Errorf("%s takes Tab: it types a tab instead of moving on", name)
		}
	}
}
