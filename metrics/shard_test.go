package metrics

import (
	"testing"
	"time"
)

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
	// The shard may have taken some before it got stuck (on a loaded
	// machine it has taken over a ring's worth: 8,194 counted); past
	// that, the ring's worth waited for it and the rest were dropped.
	const sent = 2*firstRingSize + 101 // AllocsPerRun's 100 and its warm-up
	s := c.Snapshot()
	if q := s.Run[string(TTFT)]; q.Count < firstRingSize || q.Count > sent {
		t.Errorf("live TTFT counts %d of %d first tokens, want the ring's %d (and those the shard took before it got stuck)", q.Count, sent, firstRingSize)
	}
	c.Close()
}

// TestPruneIsAmortised: with no snapshots, a record prunes the windowed
// samples once every pruneEvery of them, not on every record once the
// window holds more than that (10 s of samples at 2,000 req/s is 80,000:
// a copy of them a record cost more than the record).
func TestPruneIsAmortised(t *testing.T) {
	now := int64(time.Second)
	c := NewCollector(WithShards(1), WithClock(func() int64 { return now }))
	s := c.shards[0]
	prunes, last := 0, s.pruneAt
	for i := range 4 * pruneEvery {
		// Every sample stays in the window: nothing is ever cut.
		s.record(&Record{Index: int64(i), Phase: Profile, Streamed: true, SentNs: now - 1e6, EndNs: now, TokenNs: []int64{now - 5e5, now}})
		if s.pruneAt != last {
			prunes, last = prunes+1, s.pruneAt
		}
	}
	// Two samples a record (ITL and latency; TTFT comes at the first
	// token, TTFO with content): 8·pruneEvery, a prune per pruneEvery.
	if n := len(s.recent); n != 2*4*pruneEvery {
		t.Fatalf("%d windowed samples, want every record's 2", n)
	}
	if prunes > 8 {
		t.Errorf("%d prunes for %d samples, want one per %d", prunes, len(s.recent), pruneEvery)
	}
	close(s.in) // the records went in directly; stop the shard's goroutine
	c.wg.Wait()
}
