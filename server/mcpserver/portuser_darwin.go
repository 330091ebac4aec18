package mcpserver

import (
	"context"
	"os/exec"
	"strconv"
	"time"
)

// PortUser names the process listening on the TCP port as lsof tells it
// (the current user's processes only, unless run as root); "" when it
// cannot be found out.
func PortUser(port string) string {
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// lsof exits 1 when it finds nothing; what it printed still counts.
	out, _ := exec.CommandContext(ctx, "/usr/sbin/lsof", "-nP", "-iTCP:"+port, "-sTCP:LISTEN", "-Fpc").Output()
	return lsofListener(string(out))
}
