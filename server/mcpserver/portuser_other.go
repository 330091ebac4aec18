//go:build !linux && !darwin && !windows

package mcpserver

// PortUser names the process listening on the TCP port where the OS
// tells; here it does not, so it is always "".
func PortUser(port string) string { return "" }
