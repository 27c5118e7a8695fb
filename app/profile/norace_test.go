//go:build !race

package profile

// raceEnabled: the race detector is on (race_test.go).
const raceEnabled = false
