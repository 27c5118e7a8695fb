package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestMannWhitneyKnownValues checks U and p against values worked by hand
// and against scipy 1.10.1's scipy.stats.mannwhitneyu(a, b, method=M)
// (two-sided; the asymptotic method with its default continuity
// correction and tie-corrected variance), printed with:
//
//	python3 -c 'from scipy.stats import mannwhitneyu as m; print(m(a, b, method="exact"))'
func TestMannWhitneyKnownValues(t *testing.T) {
	t.Parallel()
	var ra, rb []float64
	for i := range 60 {
		ra = append(ra, float64(i*37%101)/10)
	}
	for i := range 70 {
		rb = append(rb, float64(i*53%103)/10+1.5)
	}
	for _, tc := range []struct {
		name    string
		a, b    []float64
		u, p    float64
		exact   bool
		bGreate float64
	}{
		// By hand: only 2.0 of b lies below a's values, under four of
		// them, so U = 4. With no ties, P(U ≤ 4) counts the ways to place
		// 4 or fewer "a above b" pairs: 1+1+2+3+5 = 12 of C(11,5) = 462
		// arrangements; two-sided p = 24/462 = 0.051948… (scipy exact:
		// 0.05194805194805195).
		{"exact, by hand", []float64{1.1, 2.3, 3.5, 4.2, 5.9}, []float64{2.0, 6.1, 7.3, 8.8, 9.4, 10.2}, 4, 24.0 / 462, true, 1 - 4.0/30},
		// Ties within and across samples: the asymptotic method (scipy:
		// statistic=52.5, pvalue=0.03434167381800142).
		{"ties, asymptotic", []float64{19, 22, 16, 29, 24, 20, 22, 16}, []float64{20, 11, 17, 12, 16, 22, 11, 15}, 52.5, 0.03434167381800142, false, 1 - 52.5/64},
		// 60 × 70 values, beyond the exact limit (scipy asymptotic:
		// statistic=1477.5, pvalue=0.00367299017165984).
		{"large, asymptotic", ra, rb, 1477.5, 0.00367299017165984, false, 1 - 1477.5/4200},
		// Identical samples (scipy: statistic=4.5, pvalue=1.0).
		{"identical", []float64{1, 2, 3}, []float64{1, 2, 3}, 4.5, 1, false, 0.5},
	} {
		got := MannWhitneyU(tc.a, tc.b)
		if got.U != tc.u || !near(got.P, tc.p, 1e-9) || got.Exact != tc.exact || !near(got.BGreater, tc.bGreate, 1e-12) {
			t.Errorf("%s: got U=%g p=%.17g exact=%v P(b>a)=%g; want U=%g p=%.17g exact=%v P(b>a)=%g",
				tc.name, got.U, got.P, got.Exact, got.BGreater, tc.u, tc.p, tc.exact, tc.bGreate)
		}
		// Swapping the samples keeps p and mirrors U.
		sw := MannWhitneyU(tc.b, tc.a)
		if !near(sw.P, got.P, 1e-12) || sw.U != float64(len(tc.a)*len(tc.b))-got.U {
			t.Errorf("%s swapped: U=%g p=%g, want U=%g p=%g", tc.name, sw.U, sw.P, float64(len(tc.a)*len(tc.b))-got.U, got.P)
		}
	}
	if r := MannWhitneyU(nil, []float64{1}); !math.IsNaN(r.P) {
		t.Errorf("empty sample: p = %g, want NaN", r.P)
	}
}

// TestExactMatchesAsymptoticForLargerSamples: at the exact limit the two
// methods agree closely (the normal approximation is good by then).
func TestExactMatchesAsymptoticForLargerSamples(t *testing.T) {
	t.Parallel()
	for _, u := range []float64{900, 1000, 1100, 1200} {
		exact := exactP(u, 50, 50)
		sigma := math.Sqrt(50 * 50 * 101 / 12.0)
		asym := 2 * normalSF((math.Max(u, 2500-u)-1250-0.5)/sigma)
		if math.Abs(exact-asym) > 0.005 {
			t.Errorf("U=%g: exact p %g, asymptotic %g", u, exact, asym)
		}
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	s := []float64{1, 2, 3, 4, 10}
	// numpy.percentile([1,2,3,4,10], [0, 50, 90, 99, 100]) = 1, 3, 7.6, 9.76, 10
	for _, tc := range [][2]float64{{0, 1}, {0.5, 3}, {0.9, 7.6}, {0.99, 9.76}, {1, 10}} {
		if got := Quantile(s, tc[0]); !near(got, tc[1], 1e-12) {
			t.Errorf("Quantile(%g) = %g, want %g", tc[0], got, tc[1])
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Errorf("Quantile of nothing is not NaN")
	}
}

// naiveQuantile is the textbook bootstrap: resample, sort, take the
// quantile.
func naiveQuantile(sorted []float64, p float64, r *rand.Rand) float64 {
	re := make([]float64, len(sorted))
	for i := range re {
		re[i] = sorted[r.IntN(len(sorted))]
	}
	slices.Sort(re)
	return Quantile(re, p)
}

// TestResampledQuantileMatchesNaiveBootstrap: the order-statistic draw has
// the same distribution as resampling and sorting: the two empirical CDFs
// of 20000 draws each stay within a Kolmogorov–Smirnov distance that
// chance alone exceeds with probability ~1e-6 (1.95 / sqrt(10000)).
func TestResampledQuantileMatchesNaiveBootstrap(t *testing.T) {
	t.Parallel()
	src := rand.New(rand.NewPCG(1, 2))
	var sample []float64
	for range 150 {
		sample = append(sample, math.Exp(src.NormFloat64())) // skewed, like latencies
	}
	slices.Sort(sample)
	const draws = 20000
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999, 1, 0} {
		fast, slow := make([]float64, draws), make([]float64, draws)
		rf, rs := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(5, 6))
		for i := range draws {
			fast[i], slow[i] = resampledQuantile(sample, p, rf), naiveQuantile(sample, p, rs)
		}
		if d := ksDistance(fast, slow); d > 1.95/math.Sqrt(draws/2) {
			t.Errorf("p%g: KS distance %.4f between order-statistic and naive bootstrap", 100*p, d)
		}
	}
}

// ksDistance is the largest gap between two empirical CDFs.
func ksDistance(a, b []float64) float64 {
	slices.Sort(a)
	slices.Sort(b)
	var i, j int
	var d float64
	for i < len(a) && j < len(b) {
		v := math.Min(a[i], b[j])
		for i < len(a) && a[i] == v {
			i++
		}
		for j < len(b) && b[j] == v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// TestBootstrapQuantile: an 18% faster sample shows as a significant 18%
// drop whose interval holds it; a sample against itself does not; the
// same seed repeats the interval exactly, another seed moves it.
func TestBootstrapQuantile(t *testing.T) {
	t.Parallel()
	src := rand.New(rand.NewPCG(9, 9))
	var a, b []float64
	for range 2000 {
		a = append(a, 50*math.Exp(0.3*src.NormFloat64()))
		b = append(b, 0.82*50*math.Exp(0.3*src.NormFloat64()))
	}
	a, b = Sorted(a), Sorted(b)
	bs := Bootstrap{Iterations: 2000, Level: 0.95, Seed: 42}
	d := bs.Quantile(a, b, 0.99, 7)
	if !d.Significant() || !(d.RelCI.Lo < -0.18 && -0.18 < d.RelCI.Hi) || d.RelCI.Hi > -0.05 {
		t.Errorf("p99 of an 18%% faster sample: rel %.3f, CI %.3f…%.3f", d.Rel, d.RelCI.Lo, d.RelCI.Hi)
	}
	if again := bs.Quantile(a, b, 0.99, 7); again != d {
		t.Errorf("same seed, different result: %+v vs %+v", again, d)
	}
	if other := (Bootstrap{Iterations: 2000, Level: 0.95, Seed: 43}).Quantile(a, b, 0.99, 7); other.RelCI == d.RelCI {
		t.Errorf("another seed gave the same interval")
	}
	self := bs.Quantile(a, a, 0.5, 1)
	if self.Significant() || self.Rel != 0 {
		t.Errorf("a sample against itself: %+v", self)
	}
	// Coverage: over independent pairs from one distribution, a 90%
	// interval of the median misses zero in about 10% of them.
	misses := 0
	const pairs = 200
	for k := range pairs {
		var x, y []float64
		for range 300 {
			x = append(x, math.Exp(src.NormFloat64()))
			y = append(y, math.Exp(src.NormFloat64()))
		}
		if (Bootstrap{Iterations: 400, Level: 0.9, Seed: uint64(k)}).Quantile(Sorted(x), Sorted(y), 0.5, 0).Significant() {
			misses++
		}
	}
	if misses < 6 || misses > 40 {
		t.Errorf("90%% interval excluded a true zero difference in %d of %d pairs, want about 20", misses, pairs)
	}
}

func TestBootstrapMean(t *testing.T) {
	t.Parallel()
	a := []float64{10, 12, 11, 13, 9, 10, 12, 11}
	b := []float64{8, 9, 10, 8, 9, 7, 9, 8}
	d := Bootstrap{Level: 0.95}.Mean(a, b)
	// Welch by hand: means 11 and 8.5, variances 12/7 and 6/7 (n−1),
	// se = sqrt((12/7 + 6/7)/8) = 0.5669…, z(0.975) = 1.959964.
	se := math.Sqrt((12.0/7 + 6.0/7) / 8)
	if !near(d.Abs, -2.5, 1e-12) || !near(d.AbsCI.Lo, -2.5-1.959964*se, 1e-6) || !near(d.AbsCI.Hi, -2.5+1.959964*se, 1e-6) {
		t.Errorf("mean diff %g CI %v, want -2.5 ± %g", d.Abs, d.AbsCI, 1.959964*se)
	}
	if !d.Significant() || !near(d.Rel, -2.5/11, 1e-12) {
		t.Errorf("rel %g significant %v", d.Rel, d.Significant())
	}
}

// BenchmarkBootstrapQuantile: one resample's p99 costs the same whatever
// the sample size (the order statistics are drawn directly); the naive
// resample-and-sort is shown beside it for scale.
func BenchmarkBootstrapQuantile(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		src := rand.New(rand.NewPCG(1, 1))
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Exp(src.NormFloat64())
		}
		slices.Sort(s)
		b.Run(fmt.Sprintf("order-statistics/n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(2, 2))
			for b.Loop() {
				resampledQuantile(s, 0.99, r)
			}
		})
		b.Run(fmt.Sprintf("naive/n=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(2, 2))
			for b.Loop() {
				naiveQuantile(s, 0.99, r)
			}
		})
	}
}
