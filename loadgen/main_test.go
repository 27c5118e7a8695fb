package loadgen

import (
	"os"
	"testing"

	"github.com/surgebench/surge/internal/testbin"
)

// TestMain runs more parallel tests at once than there are CPUs, unless
// -parallel says otherwise: they wait on their servers' answers and
// timers far longer than they compute (the timing-sensitive tests are not
// parallel). Not so under the race detector, which keeps go test's
// default: there the tests' own code needs the CPU.
func TestMain(m *testing.M) {
	if !testbin.Race {
		testbin.Parallel(8)
	}
	os.Exit(m.Run())
}
