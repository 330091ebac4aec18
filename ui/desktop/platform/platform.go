// Package platform is what the desktop app needs from each operating
// system: starting at login, whether a window can be shown, whether
// the tray works and keeping a popup above the other windows. The
// OS-specific parts sit in build-tagged files here,
// fyne-free, so that every one of them can be type-checked for every OS;
// the content they write is built by pure functions tested on any OS.
package platform

import (
	"os"

	"github.com/deskhand/deskhand/server/agent"
)

// loginItemID names Deskhand's login item where the OS wants a
// reverse-DNS name (the XDG entry's file, the LaunchAgent's label); it is
// the fyne app ID too.
const loginItemID = "io.deskhand.Deskhand"

// executable is the path that starting at login runs: this program's.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", agent.Userf(err, "cannot tell where Deskhand's program is")
	}
	return exe, nil
}

// loginItem is how an OS starts a program when the user logs in.
type loginItem interface {
	// enabled tells whether the item exists and runs exe.
	enabled(exe string) (bool, error)
	// set makes the item run exe, or removes it; removing a missing
	// item is no error.
	set(on bool, exe string) error
}

// LaunchesAtLogin tells whether this program starts when the user logs
// in: on Linux and the BSDs an XDG autostart entry, on macOS a
// LaunchAgent, on Windows a value in the per-user Run key. An item that
// runs another program (an older copy of Deskhand) does not count.
func LaunchesAtLogin() (bool, error) {
	item, err := osLoginItem()
	if err != nil {
		return false, err
	}
	exe, err := executable()
	if err != nil {
		return false, err
	}
	return item.enabled(exe)
}

// SetLaunchAtLogin makes this program start when the user logs in, or
// stops it from doing so.
func SetLaunchAtLogin(on bool) error {
	item, err := osLoginItem()
	if err != nil {
		return err
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	return item.set(on, exe)
}

// HaveDisplay tells whether a window can be shown: on Linux and the BSDs
// whether an X11 or Wayland display is set; elsewhere always.
func HaveDisplay() bool { return haveDisplay() }

// TrayUsable tells whether the tray icon can be used: on Linux and the
// BSDs fyne's tray crashes on quit without a D-Bus session bus; elsewhere
// it always works.
func TrayUsable() bool { return trayUsable() }
