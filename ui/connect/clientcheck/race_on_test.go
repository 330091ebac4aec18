//go:build race

package clientcheck_test

// raceEnabled builds the deskhand command with -race too, so the clients'
// traffic also runs under the race detector.
const raceEnabled = true
