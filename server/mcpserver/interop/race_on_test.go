//go:build race

package interop_test

// raceEnabled builds the deskhand command with -race too, so the real
// clients' traffic also runs under the race detector.
const raceEnabled = true
