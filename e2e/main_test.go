package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/surgebench/surge/internal/testbin"
)

// TestMain runs the tests from the repository's root (the documents name
// its files from there), off the user's history, and with more of them at
// once than there are CPUs unless -parallel says otherwise: each waits on
// surge processes (their servers' answers, timers, signals) far longer
// than it computes.
func TestMain(m *testing.M) {
	if testbin.Race {
		// The hostile table's servers run in this process, several times
		// slower under the race detector: at 32 a DCGM scrape of a 16 MiB
		// body ran past its 2 s interval before reaching the limit.
		testbin.Parallel(16)
	} else {
		testbin.Parallel(waiting)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: not in the repository's e2e folder:", err)
		os.Exit(1)
	}
	if err := os.Chdir(root); err != nil {
		panic(err)
	}
	// A shell's exported $COLUMNS would widen what the commands print.
	os.Unsetenv("COLUMNS")
	// The default history ($XDG_DATA_HOME/surge/history.db) is in a
	// temporary folder, for every surge these tests start.
	dir, err := os.MkdirTemp("", "surge-e2e-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// root is the repository's root, above the package's folder where go test
// starts the tests; TestMain makes it their working directory.
var root = func() string {
	p, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return p
}()

// waiting is how many tests run at once unless -parallel is given (more
// where there are more CPUs): what they wait on, not their CPU, bounds
// how many fit. The hostile table's slow-drip rows alone wait 215 s in
// all for their servers' timeouts: at 16 they held the package to 57 s
// on 2 CPUs. The documents' runs (about 20, up to 30 s each) and the
// endpoint types' (13) hold theirs from the start: at 32 the hostile
// table's slow drips, which should start first, could only start when
// the documents ended, 29 s in (a 65 s e2e in a go test of every
// package). At 64 there is room for them from the start.
const waiting = 64

// The compare test runs (metrics/compare/testdata): the same workload on
// a mock with TTFT 20 ms (slow) and 16 ms (fast).
const (
	cmpSlow = "metrics/compare/testdata/slow"
	cmpFast = "metrics/compare/testdata/fast"
)
