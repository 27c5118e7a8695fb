//go:build race

package testbin

// Race: the tests run under the race detector (norace.go).
const Race = true
