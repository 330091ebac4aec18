package servertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM writes an npm that fails its first fails runs (leaving a
// half-made node_modules, as an interrupted npm does) and then installs;
// it fails anyway when a try finds node_modules left from the last one.
func fakeNPM(t *testing.T, fails int) (npm, dir string) {
	t.Helper()
	bin, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	npm = filepath.Join(bin, "npm")
	script := `#!/bin/sh
n=$(cat "` + bin + `/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"` + bin + `/count"
[ -e node_modules/half ] && { echo "a try found the last one's node_modules"; exit 2; }
mkdir -p node_modules
if [ $n -le ` + string(rune('0'+fails)) + ` ]; then touch node_modules/half; echo "npm error Exit handler never called!"; exit 1; fi
touch node_modules/installed; echo '{}' >package-lock.json
`
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := npmBackoff
	npmBackoff = 0
	t.Cleanup(func() { npmBackoff = old })
	return npm, dir
}

// TestInstallRetries: an npm that fails once is tried again from a clean
// node_modules, and the install succeeds.
func TestInstallRetries(t *testing.T) {
	npm, dir := fakeNPM(t, 1)
	got, err := NodeJS{NPM: npm, Path: os.Getenv("PATH")}.installModules(dir)
	if err != nil || !strings.Contains(got, "try 2") {
		t.Fatalf("installModules = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "installed")); err != nil {
		t.Error(err)
	}
}

// TestInstallGivesUp: an npm that keeps failing fails the install after
// three tries, with each try's reason.
func TestInstallGivesUp(t *testing.T) {
	npm, dir := fakeNPM(t, 9)
	_, err := NodeJS{NPM: npm, Path: os.Getenv("PATH")}.installModules(dir)
	if err == nil || !strings.Contains(err.Error(), "failed 3 times") || strings.Count(err.Error(), "Exit handler never called") != 3 ||
		!strings.Contains(err.Error(), "try 3 (") {
		t.Errorf("installModules = %v", err)
	}
}
