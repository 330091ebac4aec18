package platform

import (
	"os"

	"github.com/deskhand/deskhand/server/agent"
)

// osLoginItem is the LaunchAgent in the user's ~/Library/LaunchAgents.
func osLoginItem() (loginItem, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, agent.Userf(err, "cannot find the home folder for the LaunchAgent")
	}
	return launchAgent{home: home}, nil
}

func haveDisplay() bool { return true }

func trayUsable() bool { return true }
