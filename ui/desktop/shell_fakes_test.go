package desktop

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
)

// fakePause is the core's pause switch, for fakeCore.
type fakePause struct {
	mu sync.Mutex
	on bool
}

func (p *fakePause) set(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on = on
}

func (p *fakePause) get() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.on
}

// pressShortcut does what fyne's desktop driver does with a key
// combination: the main menu's item with that shortcut runs, whatever has
// the focus. It fails the test when no item has it.
func pressShortcut(t *testing.T, a *App, key fyne.KeyName) {
	t.Helper()
	want := shortcut(key).ShortcutName()
	for _, m := range a.win.MainMenu().Items {
		for _, item := range m.Items {
			if item.Shortcut != nil && item.Shortcut.ShortcutName() == want {
				item.Action()
				return
			}
		}
	}
	t.Fatalf("no menu item has the shortcut %s", want)
}

// pressEscape types Escape on the main window with nothing focused.
func pressEscape(a *App) {
	a.win.Canvas().Unfocus()
	a.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
}

// recordURLs makes the onboarding panel record the pages it opens.
func recordURLs(a *App) *[]string {
	var opened []string
	a.onboarding.openURL = func(u *url.URL) error {
		opened = append(opened, u.String())
		return nil
	}
	return &opened
}

// holdFirstAsk holds the first ProviderModels call until gate closes,
// telling entered when it starts; the later ones go through.
type holdFirstAsk struct {
	Providers
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (h *holdFirstAsk) Models(ctx context.Context, name string) ([]string, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.gate
	}
	return h.Providers.Models(ctx, name)
}
