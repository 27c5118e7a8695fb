package metrics

import "math"

// hist is a log-linear histogram for metrics with one value per token
// (inter_chunk_latency): a t-digest Add per token costs more than the rest
// of the client's per-token work, while a bucket increment costs a
// logarithm. Buckets are 0.5% wide (relative), so a percentile read from
// one is within 0.25% of the true value; count, mean, std, min and max stay
// exact (kept by the embedded moments).
type hist struct {
	zeros   int64 // values ≤ histMin (gaps of events read together)
	buckets []int64
	moments
}

const (
	histMin    = 1e-4 // ms: 100 ns, below any timer's resolution here
	histGrowth = 1.005
	// histBuckets spans histMin to 1e7 ms (≈ 2.8 h).
	histBuckets = 5079
)

var logGrowth = math.Log(histGrowth)

func newHist() *hist { return &hist{moments: newMoments()} }

func (h *hist) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	h.moments.add(v)
	if v <= histMin {
		h.zeros++
		return
	}
	if h.buckets == nil {
		h.buckets = make([]int64, histBuckets)
	}
	i := int(math.Log(v/histMin) / logGrowth)
	h.buckets[min(i, histBuckets-1)]++
}

func (h *hist) merge(o *hist) {
	if o.n == 0 {
		return
	}
	h.moments.merge(&o.moments)
	h.zeros += o.zeros
	if o.buckets != nil {
		if h.buckets == nil {
			h.buckets = make([]int64, histBuckets)
		}
		for i, c := range o.buckets {
			h.buckets[i] += c
		}
	}
}

// quantile returns the nearest-rank q-quantile, the bucket's geometric
// middle clamped to the exact min and max.
func (h *hist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	seen := h.zeros
	if seen >= rank {
		return math.Max(h.min, 0)
	}
	for i, c := range h.buckets {
		seen += c
		if seen >= rank {
			lo := histMin * math.Exp(float64(i)*logGrowth)
			mid := lo * math.Sqrt(histGrowth)
			return math.Min(math.Max(mid, h.min), h.max)
		}
	}
	return h.max
}

func (h *hist) distribution(unit string) Distribution {
	if h.n == 0 {
		return Distribution{Unit: unit}
	}
	q := h.quantile
	return Distribution{
		Unit: unit, Count: h.n, Avg: h.mean, Min: h.min, Max: h.max,
		P1: q(0.01), P5: q(0.05), P10: q(0.10), P25: q(0.25), P50: q(0.50),
		P75: q(0.75), P90: q(0.90), P95: q(0.95), P99: q(0.99),
		Std: h.std(), Sum: h.sum,
	}
}
