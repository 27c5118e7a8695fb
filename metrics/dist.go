package metrics

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/caio/go-tdigest/v4"
)

// compression trades digest size for accuracy: at 200, p50/p90/p99 stay
// well within 0.5% of exact on 100k samples (see dist_test.go).
const compression = 200

// dist accumulates one metric: a t-digest for percentiles and exact
// moments. A dist belongs to one goroutine.
//
// Values wait in pending and go into the digest in batches. An insert into
// the digest scans its centroids, and all the more so among centroids of
// equal value, which count metrics (a fixed output length, the prompt's
// tokens) and the mock's identical timings are made of (≈ 47 µs a record
// for one digest per metric). A batch with repeated values goes in sorted,
// each long run of equal values as one weighted point, the runs in a
// shuffled order (the digest keeps sorted input less well).
type dist struct {
	td      *tdigest.TDigest
	pending []float64
	// repeats counts the pending values equal to the one before them: a
	// batch without many goes in as it came, unsorted.
	repeats int
	rng     *rand.Rand // the batches' order, seeded alike for every dist
	moments
}

// batchSize is how many values wait before they go into the digest.
const batchSize = 256

func newDist() *dist {
	td, err := tdigest.New(tdigest.Compression(compression))
	if err != nil {
		panic(err) // only for an invalid compression constant
	}
	return &dist{td: td, moments: newMoments()}
}

func (d *dist) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	d.moments.add(v)
	if d.pending == nil {
		d.pending = make([]float64, 0, batchSize)
	}
	if n := len(d.pending); n > 0 && d.pending[n-1] == v {
		d.repeats++
	}
	d.pending = append(d.pending, v)
	if len(d.pending) >= batchSize {
		d.flush()
	}
}

// flush puts the pending values into the digest (at most batchSize).
func (d *dist) flush() {
	xs := d.pending
	if len(xs) == 0 {
		return
	}
	if d.repeats < len(xs)/16 {
		// Distinct values (latencies): nothing to gain from sorting.
		for _, v := range xs {
			_ = d.td.Add(v)
		}
		d.pending, d.repeats = d.pending[:0], 0
		return
	}
	slices.Sort(xs)
	// Each run of equal values, in place, with its length alongside.
	runs := xs[:0]
	var counts [batchSize]uint64
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && xs[j] == xs[i] {
			j++
		}
		counts[len(runs)] = uint64(j - i)
		runs = append(runs, xs[i])
		i = j
	}
	if d.rng == nil {
		d.rng = rand.New(rand.NewPCG(0x5eed, uint64(compression)))
	}
	d.rng.Shuffle(len(runs), func(i, j int) {
		runs[i], runs[j] = runs[j], runs[i]
		counts[i], counts[j] = counts[j], counts[i]
	})
	for k, v := range runs {
		if n := counts[k]; n >= minRun {
			_ = d.td.AddWeighted(v, n)
			continue
		}
		for range counts[k] {
			_ = d.td.Add(v)
		}
	}
	d.pending, d.repeats = d.pending[:0], 0
}

// minRun is the shortest run of equal values that goes into the digest as
// one weighted point. Shorter runs go in value by value, as a few values
// always did: a small sample's centroids stay single values, and its
// percentiles exact.
const minRun = 16

// digest returns the t-digest with every value in it.
func (d *dist) digest() *tdigest.TDigest {
	d.flush()
	return d.td
}

// merge folds o into d; o is left unchanged.
func (d *dist) merge(o *dist) {
	if o.n == 0 {
		return
	}
	_ = d.td.Merge(o.td)
	for _, v := range o.pending {
		if n := len(d.pending); n > 0 && d.pending[n-1] == v {
			d.repeats++
		}
		d.pending = append(d.pending, v)
		if len(d.pending) >= batchSize {
			d.flush()
		}
	}
	d.moments.merge(&o.moments)
}

func (d *dist) clone() *dist {
	c := *d
	c.td = d.td.Clone()
	c.pending = slices.Clone(d.pending)
	c.rng = nil
	return &c
}

// distribution reports d in AIPerf's shape. std is the population standard
// deviation.
func (d *dist) distribution(unit string) Distribution {
	if d.n == 0 {
		return Distribution{Unit: unit}
	}
	td := d.digest()
	// A digest of few distinct values (a count metric's) interpolates past
	// its extremes: a quantile is never outside what was seen.
	q := func(p float64) float64 { return min(max(td.Quantile(p), d.min), d.max) }
	return Distribution{
		Unit: unit, Count: d.n,
		Avg: d.mean, Min: d.min, Max: d.max,
		P1: q(0.01), P5: q(0.05), P10: q(0.10), P25: q(0.25), P50: q(0.50),
		P75: q(0.75), P90: q(0.90), P95: q(0.95), P99: q(0.99),
		Std: d.std(), Sum: d.sum,
	}
}

// adjusted reports d with failed more values, each unbounded (+Inf), as
// AIPerf's error-adjusted adj_* views (AIPerf#688): percentiles by the
// nearest rank (numpy's "nearest", half to even) over the n successes and
// the failures, so a rank among the failures is +Inf; avg, sum and max are
// +Inf, std undefined (NaN). A rank among the successes reads the digest at
// that rank.
func (d *dist) adjusted(unit string, failed int64) Distribution {
	n := d.n + failed
	td := d.digest()
	q := func(p float64) float64 {
		idx := int64(math.RoundToEven(p * float64(n-1)))
		switch {
		case idx >= d.n:
			return math.Inf(1)
		case idx <= 0:
			return d.min
		case idx == d.n-1:
			return d.max
		}
		return td.Quantile(float64(idx) / float64(d.n-1))
	}
	inf := math.Inf(1)
	return Distribution{
		Unit: unit, Count: n, Avg: inf, Min: d.min, Max: inf, Sum: inf, Std: math.NaN(),
		P1: q(0.01), P5: q(0.05), P10: q(0.10), P25: q(0.25), P50: q(0.50),
		P75: q(0.75), P90: q(0.90), P95: q(0.95), P99: q(0.99),
	}
}

func (d *dist) quantiles() Quantiles {
	if d.n == 0 {
		return Quantiles{}
	}
	td := d.digest()
	return Quantiles{Count: d.n, Avg: d.mean, P50: td.Quantile(0.5), P90: td.Quantile(0.9), P99: td.Quantile(0.99)}
}
