//go:build !race

package clientcheck_test

const raceEnabled = false
