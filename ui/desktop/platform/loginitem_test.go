package platform

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestLoginItems turns each login item on and off against a temporary
// folder or a map, whatever OS runs the test.
func TestLoginItems(t *testing.T) {
	const exe = "/home/ann lee/bin/deskhand"
	for _, c := range []struct {
		name string
		item loginItem
	}{
		{"xdg", xdgAutostart{configDir: t.TempDir()}},
		{"launchagent", launchAgent{home: t.TempDir()}},
		{"runkey", runKey{values: mapValues{}, name: runValueName}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if on, err := c.item.enabled(exe); on || err != nil {
				t.Fatalf("before: on %v, %v", on, err)
			}
			if err := c.item.set(false, exe); err != nil {
				t.Errorf("turning off what is off: %v", err)
			}
			if err := c.item.set(true, exe); err != nil {
				t.Fatal(err)
			}
			if on, err := c.item.enabled(exe); !on || err != nil {
				t.Errorf("after turning on: on %v, %v", on, err)
			}
			if on, _ := c.item.enabled("/elsewhere/deskhand"); on {
				t.Error("an item that runs another program counts")
			}
			if err := c.item.set(true, exe); err != nil {
				t.Errorf("turning on twice: %v", err)
			}
			if err := c.item.set(false, exe); err != nil {
				t.Fatal(err)
			}
			if on, err := c.item.enabled(exe); on || err != nil {
				t.Errorf("after turning off: on %v, %v", on, err)
			}
			if err := c.item.set(false, exe); err != nil {
				t.Errorf("turning off twice: %v", err)
			}
		})
	}
}

func TestLoginItemFiles(t *testing.T) {
	const exe = "/opt/deskhand"
	x := xdgAutostart{configDir: t.TempDir()}
	l := launchAgent{home: t.TempDir()}
	for path, item := range map[string]loginItem{x.path(): x, l.path(): l} {
		if err := item.set(true, exe); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", path, fi.Mode().Perm())
		}
	}
	if !strings.HasSuffix(x.path(), "/autostart/io.deskhand.Deskhand.desktop") || !strings.HasSuffix(l.path(), "/Library/LaunchAgents/io.deskhand.Deskhand.plist") {
		t.Errorf("paths: %s, %s", x.path(), l.path())
	}
}

// TestXDGSwitchedOff: an entry a desktop's settings switched off is off.
func TestXDGSwitchedOff(t *testing.T) {
	const exe = "/opt/deskhand"
	for _, line := range []string{"Hidden=true", "X-GNOME-Autostart-enabled=false"} {
		x := xdgAutostart{configDir: t.TempDir()}
		if err := x.set(true, exe); err != nil {
			t.Fatal(err)
		}
		entry := strings.Replace(xdgEntry(exe), "X-GNOME-Autostart-enabled=true\n", line+"\n", 1)
		if err := os.WriteFile(x.path(), []byte(entry), 0o644); err != nil {
			t.Fatal(err)
		}
		if on, err := x.enabled(exe); on || err != nil {
			t.Errorf("with %s: on %v, %v", line, on, err)
		}
	}
}

// TestRunKeyErrors: the registry's failures reach the person, with the
// key named.
func TestRunKeyErrors(t *testing.T) {
	r := runKey{values: failingValues{}, name: runValueName}
	if _, err := r.enabled("x"); err == nil || !strings.Contains(err.Error(), `HKEY_CURRENT_USER\Software\Microsoft\Windows\CurrentVersion\Run`) {
		t.Errorf("read: %v", err)
	}
	if err := r.set(true, "x"); err == nil {
		t.Error("write: no error")
	}
	if err := r.set(false, "x"); err == nil {
		t.Error("remove: no error")
	}
}

func TestRunKeyIgnoresCase(t *testing.T) {
	r := runKey{values: mapValues{runValueName: `"c:\program files\deskhand\deskhand.exe"`}, name: runValueName}
	if on, err := r.enabled(`C:\Program Files\Deskhand\Deskhand.exe`); !on || err != nil {
		t.Errorf("on %v, %v", on, err)
	}
}

// mapValues is a registry key in memory.
type mapValues map[string]string

func (m mapValues) get(name string) (string, bool, error) {
	v, ok := m[name]
	return v, ok, nil
}

func (m mapValues) set(name, value string) error {
	m[name] = value
	return nil
}

func (m mapValues) remove(name string) error {
	delete(m, name)
	return nil
}

// failingValues is a registry key the user may not touch.
type failingValues struct{}

var errDenied = errors.New("access is denied")

func (failingValues) get(string) (string, bool, error) { return "", false, errDenied }
func (failingValues) set(string, string) error         { return errDenied }
func (failingValues) remove(string) error              { return errDenied }
