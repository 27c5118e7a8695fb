package metrics

import "sync/atomic"

// firstRingSize bounds the first tokens a shard holds between two of its
// messages (a record or a snapshot).
const firstRingSize = 1 << 12

// firstRing carries first-token times from the workers to their shard
// with no lock: a bounded queue of many writers and one reader (Vyukov's
// sequence-numbered ring). A worker never waits, for the shard or for
// another worker; when the shard is that far behind, put drops the live
// sample (live counters may be approximate; the record is exact).
type firstRing struct {
	// head is the next position a writer claims.
	head  atomic.Uint64
	slots [firstRingSize]firstSlot
	// tail is the next position the shard takes (its goroutine only).
	tail uint64
}

// firstSlot is one place in the ring: seq is its position when free for
// that position's writer, the position + 1 once written, and the position
// + firstRingSize once the shard took it.
type firstSlot struct {
	seq      atomic.Uint64
	at, ttft int64
}

func (r *firstRing) init() {
	for i := range r.slots {
		r.slots[i].seq.Store(uint64(i))
	}
}

// put queues a first token, or drops it when the ring is full: false.
func (r *firstRing) put(at, ttft int64) bool {
	for {
		pos := r.head.Load()
		sl := &r.slots[pos%firstRingSize]
		switch seq := sl.seq.Load(); {
		case seq == pos:
			if r.head.CompareAndSwap(pos, pos+1) {
				sl.at, sl.ttft = at, ttft
				sl.seq.Store(pos + 1)
				return true
			}
		case seq < pos:
			return false // the shard has not taken this slot's last round
		}
		// Another writer claimed pos first: try the next.
	}
}

// take returns the oldest queued first token (the shard's goroutine only).
func (r *firstRing) take() (at, ttft int64, ok bool) {
	sl := &r.slots[r.tail%firstRingSize]
	if sl.seq.Load() != r.tail+1 {
		return 0, 0, false
	}
	at, ttft = sl.at, sl.ttft
	sl.seq.Store(r.tail + firstRingSize)
	r.tail++
	return at, ttft, true
}
