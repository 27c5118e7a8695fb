package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The whole ranks bracketing each bound are the binomial quantiles
// scipy.stats.binom.ppf gives (computed exactly with Python's fractions):
// the lower bound lies between ranks ppf(0.025) and ppf(0.025)+1, the upper
// between ppf(0.975) and ppf(0.975)+1. The classical tables' median
// interval of 100 is ranks 40 and 61, of 20 ranks 6 and 15.
func TestQuantileRanksKnownValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n      int
		p      float64
		lo, hi int // whole ranks: lo ≤ rank < lo+1, hi−1 < rank ≤ hi
	}{
		{20, 0.5, 6, 15},
		{100, 0.5, 40, 61},
		{100, 0.9, 84, 96},
		{400, 0.95, 371, 389},
		{1000, 0.5, 469, 532},
		{1000, 0.99, 983, 997},
		{180, 0.99, 175, 181}, // 181 > n: no upper bound
		{10, 0.95, 8, 11},
	} {
		lo, hi := QuantileRanks(c.n, c.p, 0.95)
		if lo < float64(c.lo) || lo >= float64(c.lo+1) || hi <= float64(c.hi-1) || hi > float64(c.hi) {
			t.Errorf("QuantileRanks(%d, %g) = %.3f, %.3f; want [%d, %d) and (%d, %d]", c.n, c.p, lo, hi, c.lo, c.lo+1, c.hi-1, c.hi)
		}
	}
	// Five values cannot bound their median at 95% on either side
	// (0.5⁵ = 3.1% > 2.5%).
	if lo, hi := QuantileRanks(5, 0.5, 0.95); lo >= 1 || hi <= 5 {
		t.Errorf("QuantileRanks(5, 0.5) = %v, %v: want both sides unbounded", lo, hi)
	}
	if lo, hi := QuantileRanks(0, 0.5, 0.95); lo != 0 || hi != 1 {
		t.Errorf("QuantileRanks(0) = %v, %v", lo, hi)
	}
}

// A bound that falls exactly on a whole rank's level stays on it: for the
// median of 2, P(B ≤ 0) = 0.25, so at level 0.5 the bounds are X(1), X(2).
func TestQuantileRanksExactLevel(t *testing.T) {
	t.Parallel()
	if lo, hi := QuantileRanks(2, 0.5, 0.5); math.Abs(lo-1) > 1e-12 || math.Abs(hi-2) > 1e-12 {
		t.Errorf("QuantileRanks(2, 0.5, 0.5) = %v, %v, want 1, 2", lo, hi)
	}
}

// Large samples agree with the normal approximation of the binomial.
func TestQuantileRanksLarge(t *testing.T) {
	t.Parallel()
	n, p := 1_000_000, 0.99
	lo, hi := QuantileRanks(n, p, 0.95)
	h := 1.959964 * math.Sqrt(float64(n)*p*(1-p))
	if math.Abs(lo-(float64(n)*p-h)) > 2 || math.Abs(hi-(float64(n)*p+h)) > 2 {
		t.Errorf("QuantileRanks(1e6, 0.99) = %.1f, %.1f, want about %.1f ± %.1f", lo, hi, float64(n)*p, h)
	}
}

func TestQuantileInterval(t *testing.T) {
	t.Parallel()
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // 100 … 1: the value is its rank
	}
	iv := QuantileInterval(xs, 0.5, 0.95)
	lo, hi := QuantileRanks(100, 0.5, 0.95)
	if math.Abs(iv.Lo-lo) > 1e-9 || math.Abs(iv.Hi-hi) > 1e-9 {
		t.Errorf("interval %v, want the ranks %v, %v", iv, lo, hi)
	}
	small := []float64{3, 1, 2}
	if iv := QuantileInterval(small, 0.99, 0.95); !math.IsInf(iv.Hi, 1) || math.IsInf(iv.Lo, 0) {
		t.Errorf("p99 of 3 = %v, want a lower bound and none above", iv)
	}
	if iv := QuantileInterval(nil, 0.5, 0.95); !math.IsInf(iv.Lo, -1) || !math.IsInf(iv.Hi, 1) {
		t.Errorf("empty sample: %v", iv)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 257} {
		for _, gen := range []func(int) float64{
			func(int) float64 { return r.Float64() },
			func(i int) float64 { return float64(i) },       // sorted
			func(i int) float64 { return float64(n - i) },   // reversed
			func(int) float64 { return float64(r.IntN(3)) }, // many equal
		} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = gen(i)
			}
			want := slices.Sorted(slices.Values(xs))
			for k := range n {
				if got := Select(slices.Clone(xs), k); got != want[k] {
					t.Fatalf("Select(n=%d, k=%d) = %v, want %v", n, k, got, want[k])
				}
			}
		}
	}
}

func TestMinBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    float64
		want int
	}{{0.95, 72}, {0.99, 368}, {0.5, 6}} {
		n := MinBounded(c.p, 0.95)
		lo, hi := QuantileRanks(n, c.p, 0.95)
		plo, phi := QuantileRanks(n-1, c.p, 0.95)
		if n != c.want || lo < 1 || hi > float64(n) || (plo >= 1 && phi <= float64(n-1)) {
			t.Errorf("MinBounded(%g) = %d (ranks %v, %v; at n−1 %v, %v), want %d", c.p, n, lo, hi, plo, phi, c.want)
		}
	}
	if MinBounded(1, 0.95) != 0 {
		t.Error("MinBounded(1) should be 0")
	}
}

func TestTailSamples(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{{180, 0.99, 1}, {1000, 0.99, 10}, {999, 0.99, 9}, {100, 0.9, 10}, {19, 0.5, 9}, {100, 0.01, 1}} {
		if got := TailSamples(c.n, c.p); got != c.want {
			t.Errorf("TailSamples(%d, %g) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
}

// TestQuantileIntervalCoverage: over 500 seeded samples of a known
// distribution, the 95% interval covers the true percentile 93–97% of the
// time, for the median and the tails, skewed and heavy-tailed alike.
func TestQuantileIntervalCoverage(t *testing.T) {
	t.Parallel()
	const runs = 500
	dists := []struct {
		name string
		draw func(*rand.Rand) float64
		q    func(p float64) float64 // the true quantile
	}{
		{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() }, func(p float64) float64 { return -math.Log1p(-p) }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) },
			func(p float64) float64 { return math.Exp(normalQuantile(p)) }},
	}
	var pooled, total int
	for _, d := range dists {
		for _, c := range []struct {
			n int
			p float64
		}{{200, 0.5}, {200, 0.9}, {1000, 0.5}, {1000, 0.9}, {1000, 0.99}, {3000, 0.99}} {
			r := rand.New(rand.NewPCG(uint64(c.n), math.Float64bits(c.p)))
			truth := d.q(c.p)
			covered := 0
			xs := make([]float64, c.n)
			for range runs {
				for i := range xs {
					xs[i] = d.draw(r)
				}
				if iv := QuantileInterval(xs, c.p, 0.95); iv.Lo <= truth && truth <= iv.Hi {
					covered++
				}
			}
			pooled, total = pooled+covered, total+runs
			if cov := float64(covered) / runs; cov < 0.93 || cov > 0.97 {
				t.Errorf("%s n=%d p%g: the 95%% interval covered the true value in %.1f%% of %d runs, want 93–97%%",
					d.name, c.n, 100*c.p, 100*cov, runs)
			} else {
				t.Logf("%s n=%d p%g: coverage %.1f%%", d.name, c.n, 100*c.p, 100*cov)
			}
		}
	}
	t.Logf("pooled coverage %.2f%% over %d runs", 100*float64(pooled)/float64(total), total)
	// Pooled, the runs pin the coverage more tightly (±0.3 points).
	if cov := float64(pooled) / float64(total); cov < 0.942 || cov > 0.962 {
		t.Errorf("pooled coverage %.2f%% over %d runs, want 94.2–96.2%%", 100*cov, total)
	}
}
