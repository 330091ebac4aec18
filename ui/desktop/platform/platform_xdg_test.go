//go:build unix && !darwin

package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHaveDisplay(t *testing.T) {
	for _, c := range []struct {
		display, wayland string
		want             bool
	}{
		{"", "", false},
		{":0", "", true},
		{"", "wayland-0", true},
	} {
		t.Setenv("DISPLAY", c.display)
		t.Setenv("WAYLAND_DISPLAY", c.wayland)
		if got := HaveDisplay(); got != c.want {
			t.Errorf("DISPLAY=%q WAYLAND_DISPLAY=%q: HaveDisplay() = %v", c.display, c.wayland, got)
		}
	}
}

func TestNoTrayWithoutASessionBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if TrayUsable() {
		t.Error("the tray is usable without a D-Bus session bus")
	}
}

// TestLaunchAtLogin turns this test binary's autostart entry on and off
// in a temporary config folder.
func TestLaunchAtLogin(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	if on, err := LaunchesAtLogin(); on || err != nil {
		t.Fatalf("before: on %v, %v", on, err)
	}
	if err := SetLaunchAtLogin(true); err != nil {
		t.Fatal(err)
	}
	if on, err := LaunchesAtLogin(); !on || err != nil {
		t.Errorf("after turning on: on %v, %v", on, err)
	}
	exe, _ := os.Executable()
	entry, err := os.ReadFile(filepath.Join(config, "autostart", "io.deskhand.Deskhand.desktop"))
	if err != nil || !strings.Contains(string(entry), "\nExec="+xdgExec(exe)+"\n") {
		t.Fatalf("autostart entry: %q %v", entry, err)
	}
	if err := SetLaunchAtLogin(false); err != nil {
		t.Fatal(err)
	}
	if on, err := LaunchesAtLogin(); on || err != nil {
		t.Errorf("after turning off: on %v, %v", on, err)
	}
	if err := SetLaunchAtLogin(false); err != nil {
		t.Errorf("turning off twice: %v", err)
	}
}
