package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
)

// Interval is a confidence interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// MarshalJSON writes the interval with null for a bound that is not a
// finite number (a side the sample could not bound is ±Inf), which JSON
// cannot hold.
func (iv Interval) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{num(iv.Lo), num(iv.Hi)})
}

// ExcludesZero reports whether the interval lies wholly above or below 0.
func (iv Interval) ExcludesZero() bool { return iv.Lo > 0 || iv.Hi < 0 }

// Diff is how one statistic of sample b differs from a's.
type Diff struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
	// Abs is B − A, in the samples' unit.
	Abs float64 `json:"abs"`
	// Rel is B/A − 1 (−0.18: B is 18% lower); NaN when A is 0.
	Rel float64 `json:"rel"`
	// AbsCI and RelCI are Abs's and Rel's confidence intervals.
	AbsCI Interval `json:"abs_ci"`
	RelCI Interval `json:"rel_ci"`
}

// Significant reports whether the difference is significant at the
// interval's level: its interval excludes zero.
func (d Diff) Significant() bool { return d.AbsCI.ExcludesZero() }

// Bootstrap draws confidence intervals by resampling.
type Bootstrap struct {
	// Iterations is the number of resamples (2000 is plenty for a 95%
	// interval).
	Iterations int
	// Level is the confidence level, e.g. 0.95.
	Level float64
	// Seed seeds every draw; with the same seed, samples and stream a
	// result repeats exactly.
	Seed uint64
}

// Quantile compares the p-quantile of the sorted samples a and b with a
// percentile bootstrap: each resample draws len(a) values from a and
// len(b) from b with replacement. stream selects an independent random
// stream (one per comparison, so adding a comparison changes no other).
//
// A resample's quantile needs only one or two order statistics of the
// resample, and those can be drawn directly: the k-th smallest of n
// uniform indices is ⌊n·U₍ₖ₎⌋ with U₍ₖ₎ ~ Beta(k, n−k+1), and given it the
// next one is U₍ₖ₎ + (1−U₍ₖ₎)·Beta(1, n−k). So each resample costs O(1)
// whatever the sample size, and follows the ordinary bootstrap's
// distribution exactly (the tests compare the two).
func (bs Bootstrap) Quantile(a, b []float64, p float64, stream uint64) Diff {
	d := Diff{A: Quantile(a, p), B: Quantile(b, p)}
	d.Abs, d.Rel = d.B-d.A, rel(d.B, d.A)
	if len(a) == 0 || len(b) == 0 || bs.Iterations <= 0 {
		d.AbsCI, d.RelCI = Interval{math.NaN(), math.NaN()}, Interval{math.NaN(), math.NaN()}
		return d
	}
	r := rand.New(rand.NewPCG(bs.Seed, stream))
	abs, rels := make([]float64, bs.Iterations), make([]float64, bs.Iterations)
	for i := range abs {
		qa, qb := resampledQuantile(a, p, r), resampledQuantile(b, p, r)
		abs[i], rels[i] = qb-qa, rel(qb, qa)
	}
	d.AbsCI, d.RelCI = percentiles(abs, bs.Level), percentiles(rels, bs.Level)
	return d
}

// Mean compares the means of a and b: Welch's normal interval for B − A,
// and the delta method's for B/A − 1 (no resampling: the mean's sampling
// distribution is close to normal for the sample sizes a benchmark has).
func (bs Bootstrap) Mean(a, b []float64) Diff {
	ma, va := MeanVar(a)
	mb, vb := MeanVar(b)
	d := Diff{A: ma, B: mb, Abs: mb - ma, Rel: rel(mb, ma)}
	na, nb := float64(len(a)), float64(len(b))
	z := normalQuantile((1 + bs.Level) / 2)
	se := math.Sqrt(va/na + vb/nb)
	d.AbsCI = Interval{d.Abs - z*se, d.Abs + z*se}
	ratio := mb / ma
	seR := math.Abs(ratio) * math.Sqrt(vb/(nb*mb*mb)+va/(na*ma*ma))
	if mb == 0 {
		seR = math.Sqrt(vb/nb) / math.Abs(ma)
	}
	d.RelCI = Interval{d.Rel - z*seR, d.Rel + z*seR}
	return d
}

func rel(b, a float64) float64 {
	if a == 0 {
		return math.NaN()
	}
	return b/a - 1
}

// percentiles returns the central level-interval of draws (sorted in
// place). NaN draws (a zero baseline) are left out; all NaN gives NaN.
func percentiles(draws []float64, level float64) Interval {
	draws = slices.DeleteFunc(draws, math.IsNaN)
	if len(draws) == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	slices.Sort(draws)
	return Interval{Quantile(draws, (1-level)/2), Quantile(draws, (1+level)/2)}
}

// resampledQuantile is the p-quantile of one bootstrap resample of sorted,
// drawn from the resample's order statistics (see Quantile).
func resampledQuantile(sorted []float64, p float64, r *rand.Rand) float64 {
	n := len(sorted)
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	k := lo + 1 // 1-based rank of the lower order statistic
	u := beta(float64(k), float64(n-k+1), r)
	i := min(int(float64(n)*u), n-1)
	if frac == 0 || k >= n {
		return sorted[i]
	}
	// The next order statistic: the smallest of the n−k uniforms above u.
	u2 := u + (1-u)*(1-math.Pow(r.Float64(), 1/float64(n-k)))
	j := min(int(float64(n)*u2), n-1)
	return sorted[i] + frac*(sorted[j]-sorted[i])
}

// beta draws from Beta(a, b), a, b ≥ 1, as X/(X+Y) of two gamma variates.
func beta(a, b float64, r *rand.Rand) float64 {
	x := Gamma(r, a)
	return x / (x + Gamma(r, b))
}

// Gamma draws from Gamma(k, 1) by Marsaglia and Tsang's method (ACM TOMS
// 26(3), 2000); for k < 1 it draws Gamma(k+1, 1) and multiplies by U^(1/k).
func Gamma(r *rand.Rand, k float64) float64 {
	boost := 1.0
	if k < 1 {
		boost = math.Pow(r.Float64(), 1/k)
		k++
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v * boost
		}
	}
}
