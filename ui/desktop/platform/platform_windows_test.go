package platform

import "testing"

// TestRegistryRunKey turns a test-only value of the real Run key on and
// off.
func TestRegistryRunKey(t *testing.T) {
	const exe = `C:\Program Files\Deskhand Test\Deskhand.exe`
	r := runKey{values: registryValues{path: runKeyPath}, name: "DeskhandTest"}
	t.Cleanup(func() { _ = r.set(false, exe) })
	if err := r.set(true, exe); err != nil {
		t.Fatal(err)
	}
	if v, found, err := r.values.get(r.name); !found || err != nil || v != `"`+exe+`"` {
		t.Errorf("the value: %q, found %v, %v", v, found, err)
	}
	if on, err := r.enabled(exe); !on || err != nil {
		t.Errorf("after turning on: on %v, %v", on, err)
	}
	if err := r.set(false, exe); err != nil {
		t.Fatal(err)
	}
	if on, err := r.enabled(exe); on || err != nil {
		t.Errorf("after turning off: on %v, %v", on, err)
	}
	if err := r.set(false, exe); err != nil {
		t.Errorf("turning off twice: %v", err)
	}
}
