//go:build !unix && !windows

package platform

import (
	"runtime"

	"github.com/deskhand/deskhand/server/agent"
)

func osLoginItem() (loginItem, error) {
	return nil, agent.Userf(nil, "starting at login is not available on %s", runtime.GOOS)
}

func haveDisplay() bool { return true }

func trayUsable() bool { return true }
