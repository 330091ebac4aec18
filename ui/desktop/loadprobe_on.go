//go:build loadprobe

package desktop

// loadProbe is on in the program make load builds (loadprobe.go).
var loadProbe = true
