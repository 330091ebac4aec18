package agent_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces DESIGN.md §1: the core imports the standard library
// and uuid only, never an adapter, a UI toolkit or a protocol library.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/deskhand/deskhand/server/agent": true,
		"github.com/google/uuid":                    true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("server/agent depends on %s; the core may import only the standard library and uuid", pkg)
		}
	}
}
