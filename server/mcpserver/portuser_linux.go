//go:build linux

package mcpserver

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PortUser names the process listening on the TCP port, read from
// /proc; "" when it cannot be found out.
func PortUser(port string) string {
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return ""
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(table, fmt.Sprintf(":%04X", n), inodes)
	}
	if len(inodes) == 0 {
		return ""
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			pid := strings.Split(fd, "/")[2]
			comm, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
			return processLabel(strings.TrimSpace(string(comm)), pid)
		}
	}
	return ""
}

// listeningInodes adds the socket inodes of a /proc/net table's listening
// sockets on the port (":HHHH").
func listeningInodes(table, port string, into map[string]bool) {
	f, err := os.Open(table)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && strings.HasSuffix(fields[1], port) && fields[3] == "0A" {
			into[fields[9]] = true
		}
	}
}
