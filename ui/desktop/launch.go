package desktop

import (
	"context"
	"sync/atomic"

	"fyne.io/fyne/v2"
)

// Launch is the desktop before its window exists: a second launch may
// ask it to Show (from any goroutine) while the rest starts.
type Launch struct {
	fy    fyne.App
	shown atomic.Pointer[App] // set once the window exists
}

// NewLaunch starts the desktop on fy.
func NewLaunch(fy fyne.App) *Launch { return &Launch{fy: fy} }

// Show brings the window forward once there is one; it says it did.
func (l *Launch) Show() bool {
	fyne.Do(func() {
		if w := l.shown.Load(); w != nil {
			w.Show()
		}
	})
	return true
}

// Run makes the window on core and runs fyne until the person quits, ctx
// ends, or failed tells why serving stopped: Run then returns that.
func (l *Launch) Run(ctx context.Context, core Core, opts Options, failed <-chan error) error {
	win := New(l.fy, core, opts)
	l.shown.Store(win)
	defer win.Close() // once fyne has stopped (New says why not in its stop hook)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	win.Follow(ctx)
	failure := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
		case err := <-failed:
			failure <- err
		}
		fyne.Do(l.fy.Quit)
	}()
	win.Show()
	l.fy.Run()
	select {
	case err := <-failure:
		return err
	default:
		return nil
	}
}
