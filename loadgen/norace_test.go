//go:build !race

package loadgen

// raceEnabled: the race detector is on (race_test.go).
const raceEnabled = false
