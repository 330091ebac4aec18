package desktop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/deskhand/deskhand/server/agent"
)

// Launch at login: on Linux and the BSDs an XDG autostart entry; elsewhere
// the setting is not offered yet.

func autostartPath() (string, error) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return "", agent.Userf(nil, "starting at login is not available on %s yet", runtime.GOOS)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", agent.Userf(err, "cannot find the config folder for the autostart entry")
	}
	return filepath.Join(dir, "autostart", "io.deskhand.Deskhand.desktop"), nil
}

func launchesAtLogin() bool {
	p, err := autostartPath()
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// setLaunchAtLogin writes or removes the autostart entry that runs this
// executable.
func setLaunchAtLogin(on bool) error {
	p, err := autostartPath()
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return agent.Userf(err, "cannot remove %s", p)
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return agent.Userf(err, "cannot tell where Deskhand's program is")
	}
	entry := fmt.Sprintf("[Desktop Entry]\nType=Application\nName=Deskhand\nComment=Serve your own AI agents to every MCP client\nExec=%q\nX-GNOME-Autostart-enabled=true\n", exe)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return agent.Userf(err, "cannot create %s", filepath.Dir(p))
	}
	if err := os.WriteFile(p, []byte(entry), 0o644); err != nil {
		return agent.Userf(err, "cannot write %s", p)
	}
	return nil
}
