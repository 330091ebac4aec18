package mcpserver

import (
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"
)

// x/sys/windows has no wrapper for GetExtendedTcpTable.
var getExtendedTCPTable = windows.NewLazySystemDLL("iphlpapi.dll").NewProc("GetExtendedTcpTable")

const tcpTableOwnerPIDListener = 3 // TCP_TABLE_OWNER_PID_LISTENER

// PortUser names the process listening on the TCP port, from the IPv4
// and IPv6 tables of listeners; "" when it cannot be found out.
func PortUser(port string) string {
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return ""
	}
	for _, family := range []struct {
		af   uint32
		rows tcpRowLayout
	}{{windows.AF_INET, tcp4Rows}, {windows.AF_INET6, tcp6Rows}} {
		table, err := tcpListeners(family.af)
		if err != nil {
			continue
		}
		if pids := tcpTableOwners(table, family.rows, uint16(n)); len(pids) > 0 {
			return processLabel(processName(pids[0]), strconv.FormatUint(uint64(pids[0]), 10))
		}
	}
	return ""
}

// tcpListeners is GetExtendedTcpTable's table of the family's listening
// sockets with their owners.
func tcpListeners(family uint32) ([]byte, error) {
	if err := getExtendedTCPTable.Find(); err != nil {
		return nil, err
	}
	size := uint32(16 << 10)
	for range 4 { // the table may grow between asking its size and reading it
		table := make([]byte, size)
		r, _, _ := getExtendedTCPTable.Call(uintptr(unsafe.Pointer(&table[0])), uintptr(unsafe.Pointer(&size)),
			0, uintptr(family), tcpTableOwnerPIDListener, 0)
		switch windows.Errno(r) {
		case windows.ERROR_SUCCESS:
			return table, nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			continue // size now says how much it needs
		default:
			return nil, windows.Errno(r)
		}
	}
	return nil, windows.ERROR_INSUFFICIENT_BUFFER
}

// processName is the file name of the process's program, "" when this
// user may not read it; pid 4 is the kernel, where http.sys listens.
func processName(pid uint32) string {
	if pid == 4 {
		return "System"
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	size := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &size); err != nil {
		return ""
	}
	return filepath.Base(windows.UTF16ToString(buf[:size]))
}
