package loadgen

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestRaiseFDLimit lowers the soft open-file limit and has RaiseFDLimit
// put it back at the hard one, then judges concurrencies against it. Not
// parallel: the limit is the whole process's.
func TestRaiseFDLimit(t *testing.T) {
	var orig unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &orig) })
	if orig.Max < 512 {
		t.Skipf("hard open-file limit %d too low to test", orig.Max)
	}
	low := unix.Rlimit{Cur: 256, Max: orig.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	lim, err := RaiseFDLimit(100)
	if err != nil {
		t.Fatal(err)
	}
	if !lim.Known || lim.Soft != orig.Max || lim.Hard != orig.Max || lim.Need != 100+FDMargin || !lim.Fits() {
		t.Fatalf("after raising: %+v, want soft = hard = %d, need %d, fits", lim, orig.Max, 100+FDMargin)
	}
	var now unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &now); err != nil || now.Cur != orig.Max {
		t.Fatalf("soft limit now %d (%v), want %d", now.Cur, err, orig.Max)
	}
	if lim, _ = RaiseFDLimit(int(min(orig.Max, 1<<40))); lim.Fits() {
		t.Errorf("a concurrency of the whole hard limit fits: %+v (%s)", lim, lim)
	}
}
