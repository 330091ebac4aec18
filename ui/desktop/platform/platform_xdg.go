//go:build unix && !darwin

package platform

import (
	"os"

	"github.com/godbus/dbus/v5"

	"github.com/deskhand/deskhand/server/agent"
)

// osLoginItem is the XDG autostart entry in the user's config folder.
func osLoginItem() (loginItem, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, agent.Userf(err, "cannot find the config folder for the autostart entry")
	}
	return xdgAutostart{configDir: dir}, nil
}

func haveDisplay() bool {
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

func trayUsable() bool {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
