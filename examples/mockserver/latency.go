package mockserver

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// A latency histogram records durations in microseconds into log-linear
// buckets (128 per power of two, so a quantile is within 0.4% of the true
// value, and exact below 128 µs) with one atomic add per sample: no lock,
// no allocation, safe from any number of handlers.
const (
	subBits    = 7
	subBuckets = 1 << subBits // 128
	// maxExp covers up to 2^41 µs, about 25 days.
	maxExp   = 41 - subBits
	nBuckets = (maxExp + 1) * subBuckets
)

type latencyHist struct {
	counts [nBuckets]atomic.Uint64
	n      atomic.Uint64
	sumUS  atomic.Uint64
}

// bucketOf maps a value in µs to its bucket.
func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	e := bits.Len64(us) - subBits - 1 // us>>e is in [128, 256)
	if e >= maxExp {
		return nBuckets - 1
	}
	return (e+1)*subBuckets + int(us>>uint(e)) - subBuckets
}

// bucketMid is the value a bucket stands for, in µs.
func bucketMid(i int) float64 {
	if i < subBuckets {
		return float64(i)
	}
	e := i/subBuckets - 1
	lo := uint64(i%subBuckets+subBuckets) << uint(e)
	return float64(lo) + float64(uint64(1)<<uint(e))/2
}

func (h *latencyHist) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	us := uint64(d / time.Microsecond)
	h.counts[bucketOf(us)].Add(1)
	h.sumUS.Add(us)
	h.n.Add(1)
}

// latencySummary is a histogram's count, mean and quantiles in ms.
type latencySummary struct {
	Count uint64
	Mean  float64
	P50   float64
	P99   float64
}

// summary reads the histogram. Samples recorded while it reads may or may
// not be included; the result is always self-consistent enough for a
// report.
func (h *latencyHist) summary() latencySummary {
	var snap [nBuckets]uint64
	var total uint64
	for i := range h.counts {
		snap[i] = h.counts[i].Load()
		total += snap[i]
	}
	s := latencySummary{Count: total}
	if total == 0 {
		return s
	}
	s.Mean = float64(h.sumUS.Load()) / float64(h.n.Load()) / 1000
	s.P50 = quantile(&snap, total, 0.50) / 1000
	s.P99 = quantile(&snap, total, 0.99) / 1000
	return s
}

// quantile returns the q-quantile (nearest rank) of the snapshot in µs.
func quantile(snap *[nBuckets]uint64, total uint64, q float64) float64 {
	rank := uint64(q*float64(total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	if rank > total {
		rank = total
	}
	var seen uint64
	for i, c := range snap {
		seen += c
		if seen >= rank {
			return bucketMid(i)
		}
	}
	return bucketMid(nBuckets - 1)
}
