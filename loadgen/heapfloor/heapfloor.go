// Package heapfloor keeps the garbage collector from running while the
// heap is small, so a load generator's own collections do not land in the
// middle of what it measures.
//
// Why: with GOGC=100 a client whose live heap is 20–40 MiB (a tokenizer,
// 256 streams' buffers and goroutines) collects every few MiB allocated,
// most often while it warms up. On a client with one core busy reading
// tokens, each cycle's mark work (≈ 5 ms of CPU in ≈ 10 ms at 37 MiB)
// delays every read behind it: in the burst of bench/overhead.sh (256
// streams, a token every 2 ms) the first tokens read together with the
// next went from 42–117 of 2,048 to 0–7 with the collector off. A floor
// of a few hundred MiB removes those cycles for runs of ordinary size and
// costs only the garbage a run makes before it (an 8,192-request burst
// peaks at ≈ 170 MiB with no collection at all).
//
// How: the runtime has no minimum heap goal, so Hold turns GOGC off and
// sets a memory limit at the floor, which collects when the process's Go
// memory reaches it. A hook that runs after every cycle compares the room
// the floor leaves (the floor − the memory the limit counts) with the room
// the normal pacer would give (GOGC% of the live heap, stacks and
// globals): once the pacer's is larger it switches back to it (GOGC and
// the limit as they were), so a large run never collects more often than it would
// have, and to the floor again when the floor's room is larger. With
// GOGC=100 and a heap that is most of the process, that is: the floor
// until the live heap passes half of it.
//
// A user who sets GOGC or GOMEMLIMIT in the environment keeps them, as
// does a program that turned the collector off or set a memory limit
// itself: Hold then changes nothing, so it never has a limit to raise or
// to restore.
package heapfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Default is the floor surge holds during a run.
const Default = 256 << 20

// floor is the one hold a process has at a time.
type floor struct {
	bytes   int64
	percent int // GOGC before Hold

	mu      sync.Mutex
	held    bool // false once released: the hook stops re-arming
	atFloor bool // GOGC off and the limit at bytes, else the normal pacer
	sample  []metrics.Sample
}

var (
	activeMu sync.Mutex
	active   *floor
)

// Hold raises the heap size below which the collector does not run to
// bytes, until release is called. It does nothing (and release does
// nothing) when GOGC or GOMEMLIMIT is set in the environment, when the
// collector is already off or a memory limit already set, when bytes is
// not positive, or while another Hold is in force.
func Hold(bytes int64) (release func()) {
	if bytes <= 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	activeMu.Lock()
	defer activeMu.Unlock()
	if active != nil {
		return func() {}
	}
	f := &floor{bytes: bytes, held: true, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}}
	percent, limit := settings()
	if percent < 0 || limit != math.MaxInt64 { // the program chose its own
		return func() {}
	}
	f.percent = percent
	f.mu.Lock()
	f.apply()
	f.mu.Unlock()
	active = f
	arm(f)
	return f.release
}

// Active is the floor in force, in bytes (0: none, as when the
// environment sets GOGC or GOMEMLIMIT).
func Active() int64 {
	activeMu.Lock()
	defer activeMu.Unlock()
	if active == nil {
		return 0
	}
	return active.bytes
}

// settings reads GOGC (-1: off) and the memory limit without setting
// them.
func settings() (percent int, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	// The percent is kept as a uint64 that holds -1 when off.
	return int(int64(s[0].Value.Uint64())), int64(min(s[1].Value.Uint64(), math.MaxInt64))
}

// Cycles is the number of collections the process has completed, for a
// run to report how many fell inside it.
func Cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// rooms reads what the last cycle left: the room before the next cycle
// under the floor, and under the normal pacer.
func (f *floor) rooms() (atFloor, paced int64) {
	metrics.Read(f.sample)
	v := func(i int) int64 {
		if f.sample[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(min(f.sample[i].Value.Uint64(), math.MaxInt64))
	}
	live, stacks, globals, mapped, released := v(0), v(1), v(2), v(3), v(4)
	return f.bytes - (mapped - released), (live + stacks + globals) * int64(f.percent) / 100
}

// apply picks the floor or the normal pacer, whichever leaves more room
// before the next cycle, and sets it even when it is already the pick, so
// that settings changed behind its back are mended by the next cycle.
// f.mu is held.
func (f *floor) apply() {
	floorRoom, pacedRoom := f.rooms()
	atFloor := floorRoom > pacedRoom
	if atFloor {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(f.bytes)
	} else {
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(f.percent)
	}
	f.atFloor = atFloor
}

// afterGC runs once per cycle: it re-judges the live heap and re-arms.
func (f *floor) afterGC() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.held {
		return
	}
	f.apply()
	arm(f)
}

// release restores the pacer as it was before Hold.
func (f *floor) release() {
	f.mu.Lock()
	if f.held {
		f.held = false
		debug.SetMemoryLimit(math.MaxInt64)
		debug.SetGCPercent(f.percent)
	}
	f.mu.Unlock()
	activeMu.Lock()
	if active == f {
		active = nil
	}
	activeMu.Unlock()
}

// sentinel is garbage the moment it is made; its cleanup runs after the
// cycle that frees it, which is how f hears of each cycle without polling.
type sentinel struct{ _ [32]byte } // not tiny: tiny objects may never be freed alone

func arm(f *floor) {
	runtime.AddCleanup(new(sentinel), (*floor).afterGC, f)
}
