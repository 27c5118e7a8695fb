package metrics

import (
	"slices"
	"sync"
	"testing"
)

// TestFirstRingKeepsOrderAndDropsWhenFull: what goes in comes out in
// order; past firstRingSize pending, put drops and says so; taking frees
// the slots again, lap after lap.
func TestFirstRingKeepsOrderAndDropsWhenFull(t *testing.T) {
	t.Parallel()
	r := &firstRing{}
	r.init()
	for lap := range 3 {
		for i := range firstRingSize {
			if !r.put(int64(lap*firstRingSize+i), int64(i)) {
				t.Fatalf("lap %d: put %d of %d refused", lap, i, firstRingSize)
			}
		}
		if r.put(-1, -1) {
			t.Fatalf("lap %d: a full ring took one more", lap)
		}
		for i := range firstRingSize {
			at, ttft, ok := r.take()
			if !ok || at != int64(lap*firstRingSize+i) || ttft != int64(i) {
				t.Fatalf("lap %d: take %d = %d, %d, %v", lap, i, at, ttft, ok)
			}
		}
		if _, _, ok := r.take(); ok {
			t.Fatalf("lap %d: an empty ring gave one more", lap)
		}
	}
}

// TestFirstRingManyWriters: writers racing each other and the reader
// lose nothing while the ring has room, and nothing comes out twice.
func TestFirstRingManyWriters(t *testing.T) {
	t.Parallel()
	const writers, each = 4, firstRingSize / 8
	r := &firstRing{}
	r.init()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if !r.put(int64(w*each+i), 0) {
					t.Errorf("writer %d: put %d refused with the ring half empty", w, i)
				}
			}
		})
	}
	var got []int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		for {
			at, _, ok := r.take()
			if !ok {
				break
			}
			got = append(got, at)
		}
	}
	slices.Sort(got)
	if len(got) != writers*each || slices.Compact(got)[len(slices.Compact(got))-1] != writers*each-1 || len(slices.Compact(got)) != writers*each {
		t.Errorf("took %d values (%d distinct), want each of the %d once", len(got), len(slices.Compact(got)), writers*each)
	}
}
