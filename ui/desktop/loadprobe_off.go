//go:build !loadprobe

package desktop

// loadProbe is off in the shipped program (loadprobe.go); tests turn it on.
var loadProbe = false
