package stats

import "math"

// QuantileRanks returns the 1-based ranks, fractional, of the order
// statistics that bound a distribution-free level confidence interval for
// the p-quantile of a sample of n independent values from any continuous
// distribution.
//
// The number of values below the true p-quantile is binomial (n, p), so the
// k-th smallest value lies below it with probability P(B ≥ k) whatever the
// distribution (the classical order-statistic interval: Thompson 1936;
// Conover, Practical Nonparametric Statistics, §3.2). Whole ranks reach the
// level only in steps (the median of 100 at 95%: ranks 40 and 61, 96.5%),
// so each bound is interpolated between the two ranks whose one-sided
// levels straddle (1−level)/2, linearly in that probability (Hettmansperger
// & Sheather 1986, Nyblom 1992): the coverage then sits near the level for
// every n instead of above it.
//
// lo < 1 means the lower bound lies below the sample's minimum, hi > n
// that the upper lies above its maximum: the sample is too small to bound
// that side (a p99 of fewer than about 370 values has no upper bound at
// 95%). n < 1 gives 0 and n+1.
func QuantileRanks(n int, p, level float64) (lo, hi float64) {
	if n < 1 || !(p >= 0 && p <= 1) || !(level > 0 && level < 1) {
		return 0, float64(n) + 1
	}
	tail := (1 - level) / 2
	// cdf walks P(B ≤ k) upward; prev is P(B ≤ k−1).
	w := newBinomWalk(n, p)
	lo, hi = math.NaN(), math.NaN()
	prev := 0.0
	for k := w.start; k <= n; k++ {
		cdf := w.next()
		if math.IsNaN(lo) && cdf > tail {
			// X(k) is below the quantile with probability P(B ≥ k) = 1 −
			// P(B ≤ k−1) ≥ 1 − tail; X(k+1) with less. Rank k + λ.
			lo = float64(k) + (tail-prev)/(cdf-prev)
		}
		if cdf >= 1-tail {
			// X(k+1) is above the quantile with probability P(B ≤ k) ≥
			// 1 − tail; X(k) with less. Rank k+1 − λ.
			hi = float64(k+1) - (cdf-(1-tail))/(cdf-prev)
			break
		}
		prev = cdf
	}
	if math.IsNaN(lo) {
		lo = float64(n) + 1
	}
	if math.IsNaN(hi) {
		hi = float64(n) + 1
	}
	return lo, hi
}

// binomWalk yields P(B ≤ k) for B ~ binomial(n, p), k = start, start+1, …:
// the terms below start (more than 12 standard deviations under the mean)
// are too small to matter, so the walk costs O(√n) whatever n.
type binomWalk struct {
	n, start, k int
	p, pmf, cdf float64
}

func newBinomWalk(n int, p float64) *binomWalk {
	w := &binomWalk{n: n, p: p, k: -1}
	sd := math.Sqrt(float64(n) * p * (1 - p))
	w.start = max(0, int(math.Floor(float64(n)*p-12*max(sd, 1)-2)))
	return w
}

// next advances k by one and returns P(B ≤ k).
func (w *binomWalk) next() float64 {
	n, p := w.n, w.p
	if w.k < 0 {
		w.k = w.start
		w.pmf = binomPMF(n, w.k, p)
		w.cdf = w.pmf
		return w.cdf
	}
	w.k++
	if p >= 1 || w.pmf == 0 {
		w.pmf = binomPMF(n, w.k, p)
	} else {
		w.pmf *= float64(n-w.k+1) / float64(w.k) * p / (1 - p)
	}
	w.cdf = min(1, w.cdf+w.pmf)
	return w.cdf
}

// binomPMF is P(B = k) for B ~ binomial(n, p), through the log-gamma
// function (exact to rounding for any n).
func binomPMF(n, k int, p float64) float64 {
	switch {
	case k < 0 || k > n:
		return 0
	case p == 0:
		if k == 0 {
			return 1
		}
		return 0
	case p == 1:
		if k == n {
			return 1
		}
		return 0
	}
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(ln - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// QuantileInterval returns the level confidence interval of the
// p-quantile of the sample xs (QuantileRanks' bounds read off it), with
// −Inf or +Inf for a side the sample cannot bound. It reorders xs (a
// selection, O(n): no full sort); NaNs must have been left out. An empty
// sample gives (−Inf, +Inf).
func QuantileInterval(xs []float64, p, level float64) Interval {
	lo, hi := QuantileRanks(len(xs), p, level)
	return Interval{Lo: atRank(xs, lo), Hi: atRank(xs, hi)}
}

// atRank is the value at 1-based fractional rank r of xs, interpolated
// between the neighbouring order statistics: −Inf below the first, +Inf
// above the last.
func atRank(xs []float64, r float64) float64 {
	n := len(xs)
	switch {
	case r < 1:
		return math.Inf(-1)
	case r > float64(n):
		return math.Inf(1)
	}
	k := int(math.Floor(r))
	v := Select(xs, k-1)
	frac := r - float64(k)
	if frac == 0 || k >= n {
		return v
	}
	// The next order statistic is the smallest of those above position
	// k−1, which Select left to its right.
	next := xs[k]
	for _, x := range xs[k+1:] {
		next = min(next, x)
	}
	return v + frac*(next-v)
}

// Select reorders xs so that xs[k] is its k-th smallest value (0-based),
// everything before it no larger and everything after no smaller, and
// returns it: Hoare's quickselect with a median-of-three pivot, O(len(xs))
// on average. k out of range panics.
func Select(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// Median of three to xs[mid]: sorted or reversed input stays O(n).
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k] // between the two parts: equal to the pivot
		}
	}
	return xs[k]
}

// MinBounded is the smallest sample whose level interval for the
// p-quantile has both sides bounded (QuantileRanks within 1 … n): 72 for
// a p95 at 95%, 368 for a p99. 0 for p or level outside (0, 1).
func MinBounded(p, level float64) int {
	if !(p > 0 && p < 1) || !(level > 0 && level < 1) {
		return 0
	}
	// Either side is bounded once the far tail's probability, min(p,
	// 1−p)ⁿ, is under (1−level)/2; start there and step up past the
	// interpolation.
	q := max(p, 1-p)
	n := max(1, int(math.Ceil(math.Log((1-level)/2)/math.Log(q))))
	for {
		if lo, hi := QuantileRanks(n, p, level); lo >= 1 && hi <= float64(n) {
			return n
		}
		n++
	}
}

// TailSamples is how many of n values lie beyond the sample's p-quantile
// on its far side (above it for p ≥ 0.5, below it otherwise): what a
// tail percentile rests on. A p99 of 180 values rests on 1.
func TailSamples(n int, p float64) int {
	q := min(p, 1-p)
	return int(math.Floor(float64(n)*q + 1e-9))
}

// QuantileOf is Quantile (numpy's linear interpolation) of an unsorted
// sample, by selection: it reorders xs. NaN for an empty sample.
func QuantileOf(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	h := min(max(p, 0), 1) * float64(n-1)
	return atRank(xs, h+1)
}
