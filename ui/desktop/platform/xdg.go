package platform

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/atomicfile"
)

// xdgEntry is the XDG autostart entry (a Desktop Entry) that runs exe.
func xdgEntry(exe string) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=Deskhand\n" +
		"Comment=Serve your own AI agents to every MCP client\n" +
		"Exec=" + xdgExec(exe) + "\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// xdgExec is the Exec value that runs exe with no arguments, per the
// Desktop Entry spec, which is not Go's %q: inside the double quotes `"`,
// '`', '$' and '\' take a backslash; '%' is doubled (field codes are
// expanded before the quotes are read); then the value as a whole is
// escaped as a string, which doubles every backslash again and spells
// newlines, tabs and carriage returns \n, \t, \r.
func xdgExec(exe string) string {
	quoted := strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`).Replace(exe)
	value := `"` + strings.ReplaceAll(quoted, "%", "%%") + `"`
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(value)
}

// xdgAutostart is the XDG autostart entry under a config folder
// ($XDG_CONFIG_HOME, or ~/.config).
type xdgAutostart struct{ configDir string }

func (x xdgAutostart) path() string {
	return filepath.Join(x.configDir, "autostart", loginItemID+".desktop")
}

// enabled tells whether the entry exists, runs exe and is not switched
// off (Hidden=true, or X-GNOME-Autostart-enabled=false as GNOME's tools
// write).
func (x xdgAutostart) enabled(exe string) (bool, error) {
	f, err := os.Open(x.path())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, agent.Userf(err, "cannot read %s", x.path())
	}
	defer f.Close()
	keys := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			group = line
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && group == "[Desktop Entry]" {
			keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return false, agent.Userf(err, "cannot read %s", x.path())
	}
	return keys["Exec"] == xdgExec(exe) && keys["Hidden"] != "true" && keys["X-GNOME-Autostart-enabled"] != "false", nil
}

// set writes the entry that runs exe, or removes it.
func (x xdgAutostart) set(on bool, exe string) error {
	return setFile(x.path(), on, []byte(xdgEntry(exe)))
}

// setFile writes a login item's file (0644: the session manager or
// launchd reads it) or removes it; removing a missing file is no error.
func setFile(path string, on bool, content []byte) error {
	if !on {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return agent.Userf(err, "cannot remove %s", path)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return agent.Userf(err, "cannot create %s", filepath.Dir(path))
	}
	if err := atomicfile.Write(path, content, 0o644); err != nil {
		return agent.Userf(err, "cannot write %s", path)
	}
	return nil
}
