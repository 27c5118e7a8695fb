package tokenizer

import (
	"encoding/binary"
	"math/bits"
)

// pairTable maps a pair of adjacent token ids to the merge that joins them:
// its rank (position in the merges list; lower merges first) and the id of
// the merged token. It is an open-addressing hash table with linear probing,
// about three times faster than a Go map for this read-only, hot lookup.
//
// Its slots are bytes, slotSize each, little-endian: the key a<<32 | b
// (emptyKey in a free slot), then rank<<32 | merged id. Being bytes, the
// embedded tokenizer's table is used where it lies in the binary (see
// table.go) instead of being rebuilt by every surge process; a tokenizer
// loaded from tokenizer.json builds the same bytes.
type pairTable struct {
	slots []byte
	mask  uint64 // slot count − 1 (a power of two)
	shift uint
}

const (
	emptyKey = ^uint64(0)
	slotSize = 16
)

func newPairTable(n int) *pairTable {
	// Load factor ≤ 0.75: Qwen3's 151,387 merges fill 262,144 slots
	// (4 MiB) where ≤ 0.5 took 524,288 (8 MiB), which every surge process
	// paid in page faults and GC at start-up (107 → 88 ms of CPU for a
	// two-request run); counting is no slower, the table fitting caches
	// better.
	size := 1 << bits.Len(uint(n*4/3))
	t := pairTableOf(make([]byte, size*slotSize))
	for i := 0; i < len(t.slots); i += slotSize {
		binary.LittleEndian.PutUint64(t.slots[i:], emptyKey)
	}
	return t
}

// pairTableOf returns the table whose slots are slots (their count a power
// of two); it does not copy them.
func pairTableOf(slots []byte) *pairTable {
	size := len(slots) / slotSize
	return &pairTable{slots: slots, mask: uint64(size - 1), shift: uint(64 - bits.Len(uint(size-1)))}
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (t *pairTable) slot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> t.shift }

// at returns slot i's bytes.
func (t *pairTable) at(i uint64) []byte { return t.slots[i*slotSize : i*slotSize+slotSize] }

// valid reports whether a lookup in the table stays safe for a tokenizer
// of n ids: every slot's value (a free slot's too: they are 0) names a
// merged id below n and a rank below noRank, and a slot is free, so that
// the lookup of a pair the table lacks ends. A key naming ids ≥ n is
// harmless (no lookup matches it). It is branch-free: it reads every slot
// of a table used in place, and Qwen3's took 1.5 ms checked slot by slot
// with branches, 0.5 ms so.
func (t *pairTable) valid(n int) bool {
	minKey1, maxMerged, maxRank := ^uint64(0), uint64(0), uint64(0)
	for s := t.slots; len(s) >= slotSize; s = s[slotSize:] {
		k, v := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		minKey1 = min(minKey1, k+1) // 0 for a free slot
		maxMerged = max(maxMerged, v&(1<<32-1))
		maxRank = max(maxRank, v>>32)
	}
	return minKey1 == 0 && maxMerged < uint64(n) && maxRank < uint64(noRank)
}

// put records a merge; the first merge listed for a pair wins, as in
// Hugging Face's loader.
func (t *pairTable) put(a, b, rank, merged int32) {
	k := pairKey(a, b)
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		s := t.at(i)
		switch binary.LittleEndian.Uint64(s) {
		case k:
			return
		case emptyKey:
			binary.LittleEndian.PutUint64(s, k)
			binary.LittleEndian.PutUint64(s[8:], uint64(uint32(rank))<<32|uint64(uint32(merged)))
			return
		}
	}
}

// get returns the merge of a and b, or ok false when they do not merge.
func (t *pairTable) get(a, b int32) (rank, merged int32, ok bool) {
	k := pairKey(a, b)
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		s := t.at(i)
		switch binary.LittleEndian.Uint64(s) {
		case k:
			v := binary.LittleEndian.Uint64(s[8:])
			return int32(v >> 32), int32(uint32(v)), true
		case emptyKey:
			return 0, 0, false
		}
	}
}

// noRank marks a pair that does not merge.
const noRank = int32(1<<31 - 1)

// smallPiece is the length up to which the quadratic merge loop beats the
// heap: most pre-tokens are a few bytes long.
const smallPiece = 48

// mergeSmall applies the merges to syms in place the way Hugging Face's BPE
// does (lowest rank first, leftmost first among equals) and returns the
// merged symbols. ranks is scratch of len(syms).
func (t *pairTable) mergeSmall(syms, ranks []int32) []int32 {
	n := len(syms)
	ranks = ranks[:n]
	for i := 0; i < n-1; i++ {
		ranks[i] = t.rankOf(syms[i], syms[i+1])
	}
	for n > 1 {
		best, bi := noRank, -1
		for i := 0; i < n-1; i++ {
			if ranks[i] < best {
				best, bi = ranks[i], i
			}
		}
		if bi < 0 {
			break
		}
		_, id, _ := t.get(syms[bi], syms[bi+1])
		syms[bi] = id
		copy(syms[bi+1:n], syms[bi+2:n])
		if bi+2 < n {
			copy(ranks[bi+1:n-2], ranks[bi+2:n-1])
		}
		n--
		if bi > 0 {
			ranks[bi-1] = t.rankOf(syms[bi-1], syms[bi])
		}
		if bi < n-1 {
			ranks[bi] = t.rankOf(syms[bi], syms[bi+1])
		}
	}
	return syms[:n]
}

func (t *pairTable) rankOf(a, b int32) int32 {
	if r, _, ok := t.get(a, b); ok {
		return r
	}
	return noRank
}

// symbol is one node of the linked list mergeLarge works on.
type symbol struct {
	id         int32
	prev, next int32 // indexes, -1 at the ends
	gone       bool
}

// A candidate is a possible merge of list[pos] with its successor, as
// rank<<32 | pos: one comparison orders candidates lowest rank first,
// leftmost first among equals, as Hugging Face's BPE does.
type candidate uint64

// mergeLarge is mergeSmall for long pieces (long runs of letters, spaces or
// symbols): a priority queue of candidate merges over a linked list, the
// same algorithm as Hugging Face's Word::merge_all, O(n log n). Its list
// and queue are kept in sc for the next call.
func (t *pairTable) mergeLarge(syms []int32, sc *scratch) []int32 {
	n := len(syms)
	if cap(sc.list) < n {
		sc.list = make([]symbol, n)
	}
	list := sc.list[:n]
	heap := sc.heap[:0]
	defer func() { sc.heap = heap[:0] }()
	for i := range list {
		list[i] = symbol{id: syms[i], prev: int32(i - 1), next: int32(i + 1)}
	}
	list[n-1].next = -1
	push := func(c candidate) {
		heap = append(heap, c)
		for j := len(heap) - 1; j > 0; {
			p := (j - 1) / 2
			if heap[j] >= heap[p] {
				break
			}
			heap[j], heap[p] = heap[p], heap[j]
			j = p
		}
	}
	pop := func() candidate {
		top := heap[0]
		last := len(heap) - 1
		c := heap[last]
		heap = heap[:last]
		j := 0
		for {
			l := 2*j + 1
			if l >= last {
				break
			}
			if r := l + 1; r < last && heap[r] < heap[l] {
				l = r
			}
			if c <= heap[l] {
				break
			}
			heap[j] = heap[l]
			j = l
		}
		if last > 0 {
			heap[j] = c
		}
		return top
	}
	try := func(pos int32) {
		next := list[pos].next
		if next < 0 {
			return
		}
		if r, _, ok := t.get(list[pos].id, list[next].id); ok {
			push(candidate(uint64(uint32(r))<<32 | uint64(uint32(pos))))
		}
	}
	for i := 0; i < n-1; i++ {
		try(int32(i))
	}
	for len(heap) > 0 {
		c := pop()
		rank, pos := int32(c>>32), int32(uint32(c))
		s := &list[pos]
		if s.gone || s.next < 0 {
			continue
		}
		// The candidate is stale when either side has merged since (a
		// rank names one pair, so an unchanged rank is an unchanged pair).
		r, id, ok := t.get(s.id, list[s.next].id)
		if !ok || r != rank {
			continue
		}
		right := &list[s.next]
		s.id = id
		right.gone = true
		s.next = right.next
		if s.next >= 0 {
			list[s.next].prev = pos
		}
		if s.prev >= 0 {
			try(s.prev)
		}
		try(pos)
	}
	out := syms[:0]
	for i := int32(0); i >= 0; i = list[i].next {
		out = append(out, list[i].id)
	}
	return out
}
