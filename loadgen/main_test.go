package loadgen

import (
	"os"
	"testing"

	"github.com/surgebench/surge/internal/testbin"
)

// TestMain runs more of the parallel tests at once than there are CPUs
// unless -parallel says otherwise: they wait on their servers' answers
// and timers far longer than they compute (not so under the race
// detector, which keeps go test's default: their timing needs the CPU).
func TestMain(m *testing.M) {
	if !testbin.Race {
		testbin.Parallel(4)
	}
	os.Exit(m.Run())
}
