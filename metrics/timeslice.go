package metrics

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/caio/go-tdigest/v4"
)

// Timeslice is the summary of the profile requests sent in one window of
// --slice-duration (AIPerf's timeslices): each window's metrics are
// computed from its requests alone.
type Timeslice struct {
	// Index numbers the windows from the first that sent a request (0).
	// Windows are divisions of the wall clock, as AIPerf's: the first and
	// the last may be partly outside the run.
	Index int
	// StartNs and EndNs bound the window on the run clock.
	StartNs, EndNs int64
	// Metrics and Run are the window's distributions and run-level metrics.
	Metrics map[Tag]Distribution
	Run     map[Tag]float64
}

// WithSlices summarises the profile phase also per window of d
// (Summary.Timeslices); 0 does not.
func WithSlices(d time.Duration) Option { return func(c *Collector) { c.slice = d } }

// sliceSpill is how many values a window's metric keeps exactly (its
// percentiles then exact, as AIPerf's numpy ones) before it holds them in a
// t-digest: a busy window's inter-chunk gaps do not grow without bound.
const sliceSpill = 1024

// sliceDist is one metric of one window: its values while few, a digest
// once many, and exact moments.
type sliceDist struct {
	vals []float64
	td   *tdigest.TDigest
	moments
}

func newSliceDist() *sliceDist { return &sliceDist{moments: newMoments()} }

func (d *sliceDist) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	d.moments.add(v)
	d.put(v)
}

// put keeps v for the percentiles.
func (d *sliceDist) put(v float64) {
	if d.td != nil {
		_ = d.td.Add(v)
		return
	}
	d.vals = append(d.vals, v)
	if len(d.vals) > sliceSpill {
		d.spill()
	}
}

func (d *sliceDist) spill() {
	d.td = newDist().td
	for _, v := range d.vals {
		_ = d.td.Add(v)
	}
	d.vals = nil
}

func (d *sliceDist) merge(o *sliceDist) {
	d.moments.merge(&o.moments)
	for _, v := range o.vals {
		d.put(v)
	}
	if o.td != nil {
		if d.td == nil {
			d.spill()
		}
		_ = d.td.Merge(o.td)
	}
}

// distribution reports d in AIPerf's shape: percentiles by numpy's linear
// interpolation while the values are kept, from the digest after.
func (d *sliceDist) distribution(unit string) Distribution {
	q := func(p float64) float64 { return d.td.Quantile(p) }
	if d.td == nil {
		slices.Sort(d.vals)
		q = func(p float64) float64 { return linearQuantile(d.vals, p) }
	}
	return Distribution{
		Unit: unit, Count: d.n, Avg: d.mean, Min: d.min, Max: d.max,
		P1: q(0.01), P5: q(0.05), P10: q(0.10), P25: q(0.25), P50: q(0.50),
		P75: q(0.75), P90: q(0.90), P95: q(0.95), P99: q(0.99),
		Std: d.std(), Sum: d.sum,
	}
}

// linearQuantile is numpy's default percentile of sorted xs: linear
// interpolation between the closest ranks.
func linearQuantile(xs []float64, p float64) float64 {
	pos := p * float64(len(xs)-1)
	lo := int(pos)
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (pos-float64(lo))*(xs[lo+1]-xs[lo])
}

// sliceAgg holds one window's requests. It belongs to one shard goroutine,
// or to the collector after the shards stopped.
type sliceAgg struct {
	dists map[Tag]*sliceDist
	runLevel
	firstSent, lastEnd int64
}

func newSliceAgg() *sliceAgg {
	return &sliceAgg{dists: map[Tag]*sliceDist{}, runLevel: runLevel{sums: map[Tag]float64{}}}
}

func (a *sliceAgg) dist(t Tag) *sliceDist {
	d := a.dists[t]
	if d == nil {
		d = newSliceDist()
		a.dists[t] = d
	}
	return d
}

// add folds one record in, as aggregate.add does for the metrics AIPerf's
// timeslices have (the transport breakdown and read delay are left to the
// whole run).
func (a *sliceAgg) add(r *Record, v *Values, good bool) {
	if a.firstSent == 0 || r.SentNs < a.firstSent {
		a.firstSent = r.SentNs
	}
	a.lastEnd = max(a.lastEnd, r.EndNs)
	if r.NoOutput {
		a.noOutput++
	}
	if r.Err != nil {
		a.errors++
		a.dist(ErrorISL).add(v.ErrorISL)
		return
	}
	a.count++
	a.inputs += int64(r.Inputs)
	if good {
		a.good++
	}
	if r.RequestedOSL > 0 {
		a.oslRequested++
		if v.Mismatched {
			a.oslMismatched++
		}
	}
	eachValue(v, func(t Tag, x float64) { a.dist(t).add(x) })
	for _, x := range v.ICL {
		a.dist(ICL).add(x)
	}
}

func (a *sliceAgg) merge(o *sliceAgg) {
	for t, d := range o.dists {
		a.dist(t).merge(d)
	}
	if o.firstSent > 0 && (a.firstSent == 0 || o.firstSent < a.firstSent) {
		a.firstSent = o.firstSent
	}
	a.lastEnd = max(a.lastEnd, o.lastEnd)
	a.count += o.count
	a.errors += o.errors
	a.good += o.good
	a.noOutput += o.noOutput
	a.inputs += o.inputs
	a.oslRequested += o.oslRequested
	a.oslMismatched += o.oslMismatched
}

// summary computes the window's metrics.
func (a *sliceAgg) summary(origin time.Time, goodput bool, costPerHour float64) (map[Tag]Distribution, map[Tag]float64) {
	out := map[Tag]Distribution{}
	for _, d := range RequestDefs {
		if x := a.dists[d.Tag]; x != nil && x.n > 0 {
			out[d.Tag] = x.distribution(d.Unit)
		}
	}
	rl := a.runLevel
	rl.sums = map[Tag]float64{}
	for t, d := range a.dists {
		if d.n > 0 {
			rl.sums[t] = d.sum
		}
	}
	rl.inputTokens, rl.outputTokens = rl.sums[ISL], rl.sums[OSL]
	if acc, drafted := a.dists[SpecAcceptedDraftTokens], a.dists[SpecDraftTokens]; acc != nil && drafted != nil {
		rl.specDraftedAll = acc.n == drafted.n
	}
	if a.lastEnd > a.firstSent {
		rl.dur = float64(a.lastEnd-a.firstSent) / 1e9
	}
	run := rl.metrics()
	finishRun(run, origin, a.firstSent, a.lastEnd, goodput, costPerHour)
	return out, run
}

// sliceOf is the wall-clock window a record sent at sentNs (run clock)
// falls in.
func (c *Collector) sliceOf(sentNs int64) int64 {
	return (c.origin.UnixNano() + sentNs) / int64(c.slice)
}

// timeslices merges the shards' windows and summarises each, numbered from
// the first. The shards must have stopped.
func (c *Collector) timeslices() []Timeslice {
	if c.slice <= 0 {
		return nil
	}
	merged := map[int64]*sliceAgg{}
	for _, s := range c.shards {
		for k, a := range s.slices {
			if merged[k] == nil {
				merged[k] = newSliceAgg()
			}
			merged[k].merge(a)
		}
	}
	keys := slices.Sorted(maps.Keys(merged))
	out := make([]Timeslice, 0, len(keys))
	d, origin := int64(c.slice), c.origin.UnixNano()
	for _, k := range keys {
		ts := Timeslice{Index: int(k - keys[0]), StartNs: k*d - origin, EndNs: (k+1)*d - origin}
		ts.Metrics, ts.Run = merged[k].summary(c.origin, len(c.slos) > 0, c.costPerHour)
		out = append(out, ts)
	}
	return out
}
