package metrics

import (
	"slices"
	"sync"
	"testing"
	"time"
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

// TestLiveEventsNeverWaitForTheShard: the calls a stream makes while it
// reads (Started, FirstToken, Tokens, Reasoning) neither wait for the
// shard nor allocate, even with the shard stuck (a snapshot nobody reads
// holds it): the hot path shares no lock with the shard or with the other
// streams. The first tokens past what the ring holds are dropped from the
// live view, not waited for.
func TestLiveEventsNeverWaitForTheShard(t *testing.T) {
	c := NewCollector(WithShards(1))
	stuck := make(chan *view) // unbuffered and unread: the shard blocks on it
	c.shards[0].in <- msg{kind: msgSnapshot, reply: stuck}
	done := make(chan float64)
	go func() {
		i := int64(0)
		live := func() {
			c.Started(Profile)
			c.FirstToken(i, Profile, int64(time.Millisecond))
			c.Tokens(i, int64(time.Second), 1)
			c.Reasoning(i)
			i++
		}
		for range 2 * firstRingSize {
			live()
		}
		done <- testing.AllocsPerRun(100, live)
	}()
	select {
	case allocs := <-done:
		if allocs != 0 {
			t.Errorf("the live calls allocate %v times a request, want 0", allocs)
		}
	case <-time.After(time.Minute):
		t.Fatal("a live call waited for the shard")
	}
	<-stuck
	// The shard may have taken a few before it got stuck; past that, the
	// ring's worth waited for it and the rest were dropped.
	s := c.Snapshot()
	if q := s.Run[string(TTFT)]; q.Count < firstRingSize || q.Count > 2*firstRingSize {
		t.Errorf("live TTFT counts %d of %d first tokens, want the ring's %d (and those the shard took before it got stuck)", q.Count, 2*firstRingSize+101, firstRingSize)
	}
	c.Close()
}
