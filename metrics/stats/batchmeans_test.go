package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// 100 values in 10 batches of 10 whose means alternate 9, 11, 9, …:
// their sample variance is 10/9, the half-width t(0.975, 9) × √(10/9/10) =
// 2.262157 × 0.333333 = 0.754052, and their lag-1 autocorrelation is
// negative, so nothing widens it. 1 … 100 has batch means 5.5, 15.5, …,
// 95.5 (variance 916.67, half-width 2.262157 × 9.5743 = 21.6585) whose
// lag-1 autocorrelation is 0.7: with its bias (1+3·0.7)/10 added, ρ
// clamps to 0.8, and the variance widens by (1.8/0.2) = 9, the
// half-width by 3 to 64.9755.
func TestBatchMeansKnownValue(t *testing.T) {
	t.Parallel()
	alt := make([]float64, 100)
	for i := range alt {
		alt[i] = 9 + 2*float64(i/10%2) + 0.5*float64(i%2*2-1) // ±0.5 inside each batch
	}
	bm := BatchMeansCI(alt, 1, 0.95)
	if bm.Batches != 10 || bm.Size != 10 || !near(bm.Mean, 10, 1e-12) || !near(bm.Half, 0.754052, 1e-5) {
		t.Errorf("BatchMeansCI(alternating) = %+v, want 10 batches of 10, mean 10 ± 0.754052", bm)
	}
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	bm = BatchMeansCI(xs, 1, 0.95)
	if bm.Batches != 10 || bm.Size != 10 || !near(bm.Mean, 50.5, 1e-12) || !near(bm.Half, 64.9755, 1e-3) {
		t.Errorf("BatchMeansCI(1…100) = %+v, want 10 batches of 10, mean 50.5 ± 64.9755", bm)
	}
	if one := BatchMeansCI(xs[:3], 2, 0.95); !math.IsInf(one.Half, 1) || one.Batches != 1 {
		t.Errorf("one batch: %+v, want an unbounded half-width", one)
	}
	// 103 values in batches of 11 (⌈√103⌉): the 4 leading ones are left out.
	xs = append([]float64{1000, 1000, 1000, 1000}, xs[1:]...)
	if bm := BatchMeansCI(xs[:103], 1, 0.95); bm.Size != 11 || bm.Batches != 9 || bm.Mean > 100 {
		t.Errorf("leading remainder: %+v", bm)
	}
}

// ar1 is an AR(1) series around mean with lag-1 correlation phi: the
// per-second throughput of a server whose state carries over.
func ar1(r *rand.Rand, n int, mean, phi, sd float64) []float64 {
	xs := make([]float64, n)
	x := 0.0
	for i := range xs {
		x = phi*x + sd*r.NormFloat64()
		xs[i] = mean + x
	}
	return xs
}

// TestBatchMeansCoverage: on an autocorrelated series (AR(1), φ = 0.9, its
// memory ≈ 10 observations) the batch-means interval covers the true mean
// near its level, where the interval that treats the observations as
// independent covers it far less often.
func TestBatchMeansCoverage(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const runs, n = 500, 2000
	var bmCov, iidCov int
	for range runs {
		xs := ar1(r, n, 100, 0.9, 5)
		if bm := BatchMeansCI(xs, 1, 0.95); math.Abs(bm.Mean-100) <= bm.Half {
			bmCov++
		}
		mean, variance := MeanVar(xs)
		if math.Abs(mean-100) <= 1.96*math.Sqrt(variance/n) {
			iidCov++
		}
	}
	bm, iid := float64(bmCov)/runs, float64(iidCov)/runs
	if bm < 0.90 || bm > 0.98 {
		t.Errorf("batch means covered the mean in %.1f%% of %d runs, want about 95%%", 100*bm, runs)
	}
	if iid > 0.7 {
		t.Errorf("the i.i.d. interval covered it in %.1f%%: the series is not autocorrelated enough to tell", 100*iid)
	}
	t.Logf("coverage: batch means %.1f%%, i.i.d. %.1f%%", 100*bm, 100*iid)
}

// A drifting series (a slow sine over the whole run) makes the batch means
// correlated: the batches grow and the interval widens with the drift.
func TestBatchMeansWidensWithDrift(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	flat := make([]float64, 900)
	drift := make([]float64, 900)
	for i := range flat {
		noise := 3 * r.NormFloat64()
		flat[i] = 100 + noise
		drift[i] = 100 + noise + 15*math.Sin(2*math.Pi*float64(i)/900)
	}
	f, d := BatchMeansCI(flat, 1, 0.95), BatchMeansCI(drift, 1, 0.95)
	if d.Size <= f.Size || d.Half < 3*f.Half {
		t.Errorf("drift: %+v, flat: %+v; want larger batches and a much wider interval with drift", d, f)
	}
}

func TestMSER(t *testing.T) {
	t.Parallel()
	// A warm-up of one batch at 100, then a steady 1: MSER-5 drops the
	// first batch.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = 1
		if i < 5 {
			xs[i] = 100
		}
	}
	if d, ok := MSER(xs, 5); d != 5 || !ok {
		t.Errorf("MSER(warm-up of 5) = %d, %v, want 5, true", d, ok)
	}
	// A ramp over the first 30 observations, then noise around 50.
	r := rand.New(rand.NewPCG(7, 8))
	for i := range xs {
		xs[i] = 50 + r.NormFloat64()
		if i < 30 {
			xs[i] = 50 * float64(i) / 30
		}
	}
	if d, ok := MSER(xs, 5); d < 25 || d > 35 || !ok {
		t.Errorf("MSER(ramp of 30) = %d, %v, want about 30", d, ok)
	}
	// A steady series: little or nothing dropped.
	for i := range xs {
		xs[i] = 50 + r.NormFloat64()
	}
	if d, ok := MSER(xs, 5); d > 20 || !ok {
		t.Errorf("MSER(steady) = %d, %v, want little dropped", d, ok)
	}
	// A series rising throughout never settles.
	for i := range xs {
		xs[i] = float64(i)
	}
	if _, ok := MSER(xs, 5); ok {
		t.Error("MSER(a trend) settled, want not")
	}
	if _, ok := MSER(xs[:45], 5); ok {
		t.Error("MSER of 9 batches settled, want too short")
	}
}

func TestIntervalJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		iv   Interval
		want string
	}{
		{Interval{1.5, 2}, `{"lo":1.5,"hi":2}`},
		{Interval{3, math.Inf(1)}, `{"lo":3,"hi":null}`},
		{Interval{math.Inf(-1), math.NaN()}, `{"lo":null,"hi":null}`},
	} {
		b, err := json.Marshal(c.iv)
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s, %v; want %s", c.iv, b, err, c.want)
		}
	}
}

// TestBatchMeansIdentical: batches whose means are all the same (a
// metronome; equal up to float rounding) give no interval (Half +Inf,
// Identical), never one of zero width; batches that differ give one.
func TestBatchMeansIdentical(t *testing.T) {
	t.Parallel()
	period := []float64{0, 0, 8, 0, 0.1 + 0.2, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name      string
		xs        []float64
		identical bool
	}{
		{"constant", slices.Repeat([]float64{2.44}, 400), true},
		{"in step", slices.Repeat(period, 40), true},
		{"rounding apart", func() []float64 {
			xs := slices.Repeat(period, 40)
			xs[37] += 1e-13
			return xs
		}(), true},
		{"one batch differs", func() []float64 {
			xs := slices.Repeat(period, 40)
			xs[397] += 1
			return xs
		}(), false},
	} {
		bm := BatchMeansCI(tc.xs, 10, 0.95)
		if bm.Identical != tc.identical || math.IsInf(bm.Half, 1) != tc.identical || bm.Half == 0 {
			t.Errorf("%s: %+v, want identical %v", tc.name, bm, tc.identical)
		}
	}
}
