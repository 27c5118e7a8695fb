//go:build !race

package testbin

// Race: the tests run under the race detector, where code in the test
// process computes several times longer: a package whose tests run surge
// in process then has no idle CPU to give more tests at once.
const Race = false
