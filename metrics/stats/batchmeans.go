package stats

import "math"

// BatchMeans is the confidence interval of a time series' long-run mean by
// the method of nonoverlapping batch means: the series is cut into
// consecutive batches, and the batch means, nearly independent once a
// batch is longer than the series' memory, give the mean's standard error
// with a Student t on batches − 1 degrees of freedom. Unlike an interval
// that treats the observations as independent, it widens with positive
// autocorrelation and with drift inside the series.
type BatchMeans struct {
	// Mean is the mean of the batches (the series' leading observations
	// that do not fill a batch are left out).
	Mean float64
	// Half is the interval's half-width (+Inf with fewer than two batches,
	// or when they are Identical).
	Half float64
	// Batches and Size are how many batches of how many observations.
	Batches, Size int
	// Identical is set when every batch has the same mean (to a relative
	// 1e-9: completions that arrive in step, a metronome series): their
	// spread, zero, estimates nothing, so the interval is not estimable
	// (Half +Inf) rather than of zero width.
	Identical bool
}

// minBatches is the fewest batches BatchMeansCI merges down to while their
// means still look correlated; below it the t quantile (2.26 at 10
// batches) already widens the interval for what little is left.
const minBatches = 10

// BatchMeansCI returns the level interval of xs's long-run mean. The batch
// size starts at max(minSize, ⌈√n⌉) — the batches and their size both
// grow with n, which makes the variance estimate consistent (Chien,
// Goldsman & Melamed 1997) — and doubles while there are more than
// minBatches batches whose means show a significant lag-1 autocorrelation
// (one-sided 5% test: r₁ > 1.645/√b), the batch-size search of Fishman &
// Yarberry's LBATCH (INFORMS J. Computing 9(3), 1997) and of Law & Carson
// (Operations Research 27(5), 1979). The number of batches then ends
// between 10 and 30 or so, as Schmeiser (Operations Research 30(3), 1982)
// recommends.
func BatchMeansCI(xs []float64, minSize int, level float64) BatchMeans {
	n := len(xs)
	m := max(minSize, int(math.Ceil(math.Sqrt(float64(n)))), 1)
	for {
		b := n / m
		if b < 2 {
			bm := BatchMeans{Batches: b, Size: m, Half: math.Inf(1), Mean: math.NaN()}
			if n > 0 {
				bm.Mean, _ = MeanVar(xs)
			}
			return bm
		}
		means := batchMeans(xs, m)
		if b > minBatches && lag1(means) > 1.645/math.Sqrt(float64(b)) {
			m *= 2
			continue
		}
		mean, variance := MeanVar(means)
		if variance <= math.Pow(1e-9*mean, 2) {
			return BatchMeans{Mean: mean, Batches: b, Size: m, Half: math.Inf(1), Identical: true}
		}
		// What correlation the test could not tell from noise still
		// shrinks the variance: widen it by the AR(1) factor (1+ρ)/(1−ρ),
		// ρ the batch means' lag-1 autocorrelation with its small-sample
		// bias (−(1+3ρ)/b) taken out, clamped to [0, 0.8].
		r1 := lag1(means)
		rho := min(max(r1+(1+3*r1)/float64(b), 0), 0.8)
		variance *= (1 + rho) / (1 - rho)
		return BatchMeans{Mean: mean, Batches: b, Size: m,
			Half: TQuantile((1+level)/2, float64(b-1)) * math.Sqrt(variance/float64(b))}
	}
}

// batchMeans cuts xs into len(xs)/m batches of m, the leading remainder
// left out (a series' start is its least settled part), and returns their
// means.
func batchMeans(xs []float64, m int) []float64 {
	b := len(xs) / m
	xs = xs[len(xs)-b*m:]
	out := make([]float64, b)
	for i := range out {
		var s float64
		for _, x := range xs[i*m : (i+1)*m] {
			s += x
		}
		out[i] = s / float64(m)
	}
	return out
}

// lag1 is the lag-1 autocorrelation of xs (0 for a constant series).
func lag1(xs []float64) float64 {
	mean, _ := MeanVar(xs)
	var num, den float64
	for i, x := range xs {
		d := x - mean
		den += d * d
		if i > 0 {
			num += d * (xs[i-1] - mean)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// MSER returns how many leading observations of xs to discard as the
// warm-up transient, by the MSER-m rule (m = 5 gives MSER-5): average xs
// in batches of m, then choose the truncation d (in batches) that
// minimises the marginal standard error of what is left,
//
//	MSER(d) = Σ_{j>d} (Z_j − Z̄_d)² / (k − d)²,
//
// over d in the first half of the k batches (White 1997, "An effective
// truncation heuristic for bias reduction in simulation output",
// Simulation 69(6); White, Cobb & Spratt 2000, "A comparison of five
// steady-state truncation heuristics for simulation", Proc. Winter
// Simulation Conference). settled is false when the minimum falls at the
// end of that half, or there are fewer than 10 batches: the series is too
// short, or never settles, for a truncation point to be trusted.
func MSER(xs []float64, m int) (drop int, settled bool) {
	m = max(m, 1)
	k := len(xs) / m
	if k < 10 {
		return 0, false
	}
	// Batches from the start: the trailing remainder is left out. Centred
	// on their mean, so the sums of squares below lose no precision.
	z := make([]float64, k)
	for j := range z {
		var s float64
		for _, x := range xs[j*m : (j+1)*m] {
			s += x
		}
		z[j] = s / float64(m)
	}
	centre, _ := MeanVar(z)
	for j := range z {
		z[j] -= centre
	}
	// Suffix sums give each candidate's statistic in O(1).
	sum, sq := make([]float64, k+1), make([]float64, k+1)
	for j := k - 1; j >= 0; j-- {
		sum[j], sq[j] = sum[j+1]+z[j], sq[j+1]+z[j]*z[j]
	}
	best, bestD := math.Inf(1), 0
	limit := k / 2
	for d := 0; d <= limit; d++ {
		left := float64(k - d)
		mean := sum[d] / left
		ss := max(0, sq[d]-left*mean*mean)
		// A relative tolerance keeps rounding from moving a flat minimum.
		if v := ss / (left * left); v < best*(1-1e-12) {
			best, bestD = v, d
		}
	}
	return bestD * m, bestD < limit
}
