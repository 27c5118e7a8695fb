//go:build race

package loadgen

// raceEnabled: the race detector slows every goroutine several-fold, so
// timing assertions against wall-clock configuration are relaxed.
const raceEnabled = true
