package mcpserver

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// PortUser (one per OS) names the process listening on a TCP port, for
// the message that the port is taken: from /proc on Linux, lsof on macOS,
// GetExtendedTcpTable on Windows; "" where it cannot be found out.

// processLabel is how a port's holder is named: "nginx (pid 812)", or
// "a process (pid 4)" when its name cannot be read.
func processLabel(name, pid string) string {
	if name == "" {
		name = "a process"
	}
	return name + " (pid " + pid + ")"
}

// lsofListener names the first process in the field output of
// lsof -Fpc: a "p<pid>" line starts a process and a "c<command>" line
// names it; other lines (the "f<fd>" ones lsof adds) are skipped. lsof
// lists the processes by pid, so a server's parent (nginx's master) comes
// before the workers that share its socket. "" when there is none or
// the output is not lsof's.
func lsofListener(out string) string {
	pid, name := "", ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		switch line[0] {
		case 'p':
			if pid != "" { // the next process
				return processLabel(name, pid)
			}
			if _, err := strconv.ParseUint(line[1:], 10, 32); err != nil {
				return ""
			}
			pid = line[1:]
		case 'c':
			if pid != "" && name == "" {
				name = line[1:]
			}
		}
	}
	if pid == "" {
		return ""
	}
	return processLabel(name, pid)
}

// The layouts of GetExtendedTcpTable's tables (MIB_TCPTABLE_OWNER_PID,
// MIB_TCP6TABLE_OWNER_PID): a DWORD count, then the rows, each with the
// local port and the owner's pid at these offsets.
var (
	tcp4Rows = tcpRowLayout{size: 24, port: 8, pid: 20}  // MIB_TCPROW_OWNER_PID
	tcp6Rows = tcpRowLayout{size: 56, port: 20, pid: 52} // MIB_TCP6ROW_OWNER_PID
)

type tcpRowLayout struct{ size, port, pid int }

// tcpTableOwners is the pids that own the table's rows on port. A row's
// port is a DWORD whose low 16 bits hold the port in network byte order
// (its first two bytes in memory, big-endian; the rest may be garbage);
// the count and the pids are in the machine's (little-endian) order. A
// count larger than the table is read as far as the table goes.
func tcpTableOwners(table []byte, rows tcpRowLayout, port uint16) []uint32 {
	if len(table) < 4 {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(table))
	var pids []uint32
	for i := 0; i < n; i++ {
		row := table[min(len(table), 4+i*rows.size):]
		if len(row) < rows.size {
			break
		}
		if binary.BigEndian.Uint16(row[rows.port:]) == port {
			pids = append(pids, binary.LittleEndian.Uint32(row[rows.pid:]))
		}
	}
	return pids
}
