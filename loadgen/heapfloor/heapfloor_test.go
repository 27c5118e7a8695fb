package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
// with the hook); the metric holds -1, off, as its uint64.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64()))
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

func TestTheEnvironmentWins(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "400")
			percent := gcPercent()
			release := Hold(64 << 20)
			defer release()
			if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != percent || l != math.MaxInt64 || Active() != 0 {
				t.Errorf("with %s set: GOGC %d, limit %d, floor %d; want them untouched and no floor", env, p, l, Active())
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
