//go:build race

package loadgen

// raceEnabled: the race detector is on; sync.Pool then drops items at
// random, so what pooling saves a request is not counted (budget_test.go).
const raceEnabled = true
