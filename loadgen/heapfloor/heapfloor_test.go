package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// These tests change the process's collector settings, so none runs in
// parallel, and each restores what it changed. The floor counts the memory
// the runtime holds, so tests that expect to start at the floor first
// return what earlier tests' garbage left (debug.FreeOSMemory).

var sink []byte

// churn allocates n bytes of garbage in 4 KiB pieces.
func churn(n int) {
	for range n >> 12 {
		sink = make([]byte, 4<<10)
	}
	sink = nil
}

// gcPercent reads GOGC without setting it (a set and restore could race
// with the hook).
func gcPercent() int {
	p, _ := settings()
	return p
}

// waitFor runs collections until cond holds (the hook runs on the
// cleanup goroutine after a cycle), failing after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s of collections: not %s", what)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func (f *floor) isAtFloor() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.atFloor
}

func TestHoldDefersCollection(t *testing.T) {
	debug.FreeOSMemory()
	release := Hold(128 << 20)
	defer release()
	before := Cycles()
	churn(24 << 20) // with GOGC=100 and a heap of a few MiB: several cycles
	if n := Cycles() - before; n != 0 {
		t.Errorf("%d collections while 24 MiB of garbage stayed under a 128 MiB floor", n)
	}
}

func TestHoldStillCollectsAtTheFloor(t *testing.T) {
	runtime.GC()
	release := Hold(32 << 20)
	defer release()
	before := Cycles()
	churn(160 << 20)
	if Cycles() == before {
		a, b := active.rooms()
		t.Errorf("no collection while 160 MiB of garbage passed a 32 MiB floor (GOGC %d, limit %d, rooms %d %d, at floor %v)", gcPercent(), debug.SetMemoryLimit(-1), a, b, active.isAtFloor())
	}
}

func TestHoldYieldsToALargeLiveHeap(t *testing.T) {
	debug.FreeOSMemory()
	percent := gcPercent()
	release := Hold(64 << 20)
	defer release()
	f := active
	if !f.isAtFloor() {
		t.Fatal("a small heap did not start at the floor")
	}
	keep := make([][]byte, 0, 12<<10)
	for range cap(keep) {
		keep = append(keep, make([]byte, 4<<10)) // 48 MiB live: over half the floor
	}
	waitFor(t, "back on the normal pacer with 48 MiB live under a 64 MiB floor", func() bool { return !f.isAtFloor() })
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != percent || limit != math.MaxInt64 {
		t.Errorf("normal pacer: GOGC %d, limit %d; want %d, no limit", p, limit, percent)
	}
	runtime.KeepAlive(keep)
	keep = nil
	waitFor(t, "at the floor again once the live heap fell", f.isAtFloor)
	if p, limit := gcPercent(), debug.SetMemoryLimit(-1); p != -1 || limit != 64<<20 {
		t.Errorf("at the floor: GOGC %d, limit %d; want off, %d", p, limit, 64<<20)
	}
}

func TestReleaseRestores(t *testing.T) {
	debug.FreeOSMemory()
	percent, limit := gcPercent(), debug.SetMemoryLimit(-1)
	release := Hold(64 << 20)
	if gcPercent() != -1 || debug.SetMemoryLimit(-1) != 64<<20 {
		t.Fatal("Hold did not set GOGC off and the limit at the floor")
	}
	if Active() != 64<<20 {
		t.Errorf("Active() = %d while a 64 MiB floor is held", Active())
	}
	if again := Hold(1 << 30); gcPercent() != -1 || debug.SetMemoryLimit(-1) != 64<<20 {
		t.Error("a second Hold while one is in force changed the settings")
	} else {
		again()
	}
	release()
	if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != percent || l != limit {
		t.Errorf("after release: GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
	if Active() != 0 {
		t.Error("release left the hold active")
	}
}

func TestTheUsersSettingsWin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     string // set to "400" for the case
		percent int    // set by the program before Hold
		limit   int64
	}{
		{name: "GOGC in the environment", env: "GOGC", percent: 100, limit: math.MaxInt64},
		{name: "GOMEMLIMIT in the environment", env: "GOMEMLIMIT", percent: 100, limit: math.MaxInt64},
		{name: "the program turned the collector off", percent: -1, limit: math.MaxInt64},
		{name: "the program set a limit below the floor", percent: 100, limit: 32 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, "400")
			}
			oldPercent, oldLimit := debug.SetGCPercent(tc.percent), debug.SetMemoryLimit(tc.limit)
			defer func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) }()
			release := Hold(64 << 20)
			defer release()
			if p, l := settings(); p != tc.percent || l != tc.limit || Active() != 0 {
				t.Errorf("GOGC %d, limit %d, floor %d; want %d, %d and no floor", p, l, Active(), tc.percent, tc.limit)
			}
		})
	}
}

func TestCyclesCounts(t *testing.T) {
	before := Cycles()
	runtime.GC()
	if Cycles() <= before {
		t.Errorf("Cycles() %d after a collection, %d before", Cycles(), before)
	}
}
