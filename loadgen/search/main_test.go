package search

import (
	"os"
	"testing"

	"github.com/surgebench/surge/internal/testbin"
)

// TestMain runs the three searches against mocks at once rather than two
// (go test's default on two CPUs): they wait on their probes' timers far
// longer than they compute, and the third otherwise started only when the
// first ended. Not so under the race detector, which keeps the default.
func TestMain(m *testing.M) {
	if !testbin.Race {
		testbin.Parallel(4)
	}
	os.Exit(m.Run())
}
