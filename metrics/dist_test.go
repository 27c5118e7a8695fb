package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exact is the nearest-rank percentile the digest is checked against.
func exact(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func TestDigestPercentilesMatchExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		draw func() float64
	}{
		{"uniform", func() float64 { return 10 + 90*rng.Float64() }},
		{"lognormal latency", func() float64 { return 20 * math.Exp(0.5*rng.NormFloat64()) }},
		{"exponential", func() float64 { return 5 + rng.ExpFloat64()*15 }},
		{"bimodal", func() float64 {
			if rng.IntN(20) == 0 { // 5%: p90 and p99 fall inside a mode
				return 400 + 50*rng.Float64()
			}
			return 20 + 5*rng.Float64()
		}},
	}
	for _, tc := range cases {
		// 100k samples spread over 4 shards, then merged as snapshots do.
		parts := []*dist{newDist(), newDist(), newDist(), newDist()}
		xs := make([]float64, 100_000)
		for i := range xs {
			xs[i] = tc.draw()
			parts[i%4].add(xs[i])
		}
		d := newDist()
		for _, p := range parts {
			d.merge(p)
		}
		slices.Sort(xs)
		got := d.distribution("ms")
		for _, q := range []struct {
			p   float64
			got float64
		}{{0.50, got.P50}, {0.90, got.P90}, {0.99, got.P99}} {
			want := exact(xs, q.p)
			if rel := math.Abs(q.got-want) / want; rel > 0.005 {
				t.Errorf("%s: p%.0f = %.4f, exact %.4f (%.3f%% off, limit 0.5%%)", tc.name, q.p*100, q.got, want, rel*100)
			}
		}
		var sum, sq float64
		for _, x := range xs {
			sum += x
		}
		mean := sum / float64(len(xs))
		for _, x := range xs {
			sq += (x - mean) * (x - mean)
		}
		if math.Abs(got.Avg-mean) > 1e-9*mean || math.Abs(got.Std-math.Sqrt(sq/float64(len(xs)))) > 1e-6 {
			t.Errorf("%s: avg/std %.6f/%.6f, want %.6f/%.6f", tc.name, got.Avg, got.Std, mean, math.Sqrt(sq/float64(len(xs))))
		}
		if got.Min != xs[0] || got.Max != xs[len(xs)-1] || got.Count != int64(len(xs)) {
			t.Errorf("%s: min/max/count %v/%v/%d", tc.name, got.Min, got.Max, got.Count)
		}
	}
}

func BenchmarkDistAdd(b *testing.B) {
	d := newDist()
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = 20 * math.Exp(0.5*rng.NormFloat64())
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d.add(xs[i%len(xs)])
	}
}

func TestHistPercentilesMatchExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []*hist{newHist(), newHist(), newHist()}
	xs := make([]float64, 100_000)
	for i := range xs {
		switch i % 10 {
		case 0:
			xs[i] = 0 // events read in one go
		default:
			xs[i] = 5 * math.Exp(0.3*rng.NormFloat64())
		}
		parts[i%3].add(xs[i])
	}
	h := newHist()
	for _, p := range parts {
		h.merge(p)
	}
	slices.Sort(xs)
	got := h.distribution("ms")
	for _, q := range []struct {
		p, got float64
	}{{0.05, got.P5}, {0.50, got.P50}, {0.90, got.P90}, {0.99, got.P99}} {
		want := exact(xs, q.p)
		if want == 0 {
			if q.got != 0 {
				t.Errorf("p%.0f = %v, want 0", q.p*100, q.got)
			}
			continue
		}
		if rel := math.Abs(q.got-want) / want; rel > 0.005 {
			t.Errorf("p%.0f = %.4f, exact %.4f (%.3f%% off)", q.p*100, q.got, want, rel*100)
		}
	}
	if got.Min != 0 || got.Max != xs[len(xs)-1] || got.Count != int64(len(xs)) {
		t.Errorf("min/max/count %v/%v/%d", got.Min, got.Max, got.Count)
	}
}

func BenchmarkHistAdd(b *testing.B) {
	h := newHist()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.add(5 + float64(i%7)*0.01)
	}
}

// TestDigestOfRepeatedValues: count metrics and a mock's timings repeat
// the same values, which the batches put into the digest as weighted
// points; percentiles still match the exact ones, and a small sample's
// are exact.
func TestDigestOfRepeatedValues(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name string
		n    int
		draw func() float64
	}{
		{"constant", 100_000, func() float64 { return 8 }},
		{"mostly one value", 100_000, func() float64 {
			if rng.IntN(10) == 0 {
				return float64(1 + rng.IntN(16))
			}
			return 8
		}},
		{"a few values", 50_000, func() float64 {
			// 35%, 30%, 20%, 15%: no percentile checked falls between two.
			switch r := rng.Float64(); {
			case r < 0.35:
				return 0
			case r < 0.65:
				return 2.5
			case r < 0.85:
				return 5
			}
			return 7.5
		}},
		{"small sample with repeats", 40, func() float64 { return float64(rng.IntN(5)) }},
	}
	for _, tc := range cases {
		parts := []*dist{newDist(), newDist()}
		xs := make([]float64, tc.n)
		for i := range xs {
			xs[i] = tc.draw()
			parts[i%2].add(xs[i])
		}
		d := newDist()
		for _, p := range parts {
			d.merge(p)
		}
		slices.Sort(xs)
		got := d.distribution("tokens")
		for _, q := range []struct {
			p   float64
			got float64
		}{{0.10, got.P10}, {0.50, got.P50}, {0.90, got.P90}, {0.99, got.P99}} {
			want := exact(xs, q.p)
			limit := 0.005 * max(want, 1)
			if tc.n < 100 {
				limit = 0 // a sample this small is held exactly
			}
			if math.Abs(q.got-want) > limit || q.got < got.Min-1e-9 || q.got > got.Max+1e-9 {
				t.Errorf("%s: p%.0f = %.4f, exact %.4f (min %v max %v)", tc.name, q.p*100, q.got, want, got.Min, got.Max)
			}
		}
		if got.Count != int64(tc.n) {
			t.Errorf("%s: count %d, want %d", tc.name, got.Count, tc.n)
		}
	}
}

// TestAdjustedNearestRank holds the error-adjusted view to AIPerf's
// (AIPerf#688): numpy's percentile by the nearest rank over the successes
// and one +Inf per failure. For 1…10 and two failures (n = 12), numpy
// gives p1 1, p25 4, p50 7 (rank 5.5 rounds to even: 6), p75 9, p90 +Inf.
func TestAdjustedNearestRank(t *testing.T) {
	t.Parallel()
	d := newDist()
	for v := 1; v <= 10; v++ {
		d.add(float64(v))
	}
	a := d.adjusted("ms", 2)
	inf := math.Inf(1)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"p1", a.P1, 1}, {"p25", a.P25, 4}, {"p50", a.P50, 7}, {"p75", a.P75, 9},
		{"p90", a.P90, inf}, {"p99", a.P99, inf}, {"min", a.Min, 1}, {"max", a.Max, inf},
		{"avg", a.Avg, inf}, {"sum", a.Sum, inf},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if a.Count != 12 || !math.IsNaN(a.Std) {
		t.Errorf("count %d std %v, want 12 and undefined", a.Count, a.Std)
	}
}

// TestQuantilesWithinExtremes: a digest of two distinct values (a count
// metric of two kinds of request) must not report a quantile past them.
func TestQuantilesWithinExtremes(t *testing.T) {
	t.Parallel()
	d := newDist()
	for i := range 45 {
		v := 550.0
		if i%3 == 2 {
			v = 64 // as a tool loop's results come among a session's turns
		}
		d.add(v)
	}
	for range 300 {
		d.add(64)
	}
	dd := d.distribution("tokens")
	for _, q := range []float64{dd.P1, dd.P5, dd.P10, dd.P25, dd.P50, dd.P75, dd.P90, dd.P95, dd.P99} {
		if q < 64 || q > 550 {
			t.Fatalf("a quantile of %v outside [64, 550]: %+v", q, dd)
		}
	}
}
