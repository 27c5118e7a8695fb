package guidellm

import (
	"math"
	"slices"
	"sort"

	"github.com/surgebench/surge/app/peers"
)

// The statistics of GuideLLM's reports, as guidellm/schemas/statistics.py
// defines them: a distribution is built from (value, weight) pairs as a
// PDF over its distinct values; its percentiles are the first value whose
// cumulative probability reaches p (numpy's searchsorted, side left), its
// mean and variance weighted, its mode the most probable value. Rates and
// concurrencies over time are distributions weighted by the time each
// level held.

// weighted is a value and its weight.
type weighted struct{ v, w float64 }

// percentileNames are the Percentiles model's fields, in order, with
// their probabilities.
var percentileNames = []struct {
	name string
	p    float64
}{
	{"p001", 0.001}, {"p01", 0.01}, {"p05", 0.05}, {"p10", 0.1}, {"p25", 0.25}, {"p50", 0.5},
	{"p75", 0.75}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999},
}

// summary is a DistributionSummary.
type summary struct {
	mean, median, mode, variance, std float64
	min, max                          float64
	count                             int
	totalSum                          float64
	percentiles                       [11]float64
}

// object is the summary as GuideLLM writes it (its fields in order).
func (s summary) object() *peers.Object {
	o := &peers.Object{}
	o.Set("mean", s.mean)
	o.Set("median", s.median)
	o.Set("mode", s.mode)
	o.Set("variance", s.variance)
	o.Set("std_dev", s.std)
	o.Set("min", s.min)
	o.Set("max", s.max)
	o.Set("count", s.count)
	o.Set("total_sum", s.totalSum)
	p := &peers.Object{}
	for i, n := range percentileNames {
		p.Set(n.name, s.percentiles[i])
	}
	o.Set("percentiles", p)
	o.Set("pdf", nil)
	return o
}

// fromValues is DistributionSummary.from_values: count defaults to the
// sum of the weights (rounded); no values is an empty summary of count
// 0, whatever count says (as GuideLLM's).
func fromValues(vals []weighted, count *int) summary {
	if len(vals) == 0 {
		return summary{}
	}
	n := 0
	if count != nil {
		n = *count
	} else {
		var sw float64
		for _, x := range vals {
			sw += x.w
		}
		n = int(math.RoundToEven(sw))
	}
	sorted := slices.Clone(vals)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].v < sorted[j].v })
	// Distinct values, their weights summed, zero weights dropped.
	var pdf []weighted
	for _, x := range sorted {
		if len(pdf) > 0 && pdf[len(pdf)-1].v == x.v {
			pdf[len(pdf)-1].w += x.w
			continue
		}
		pdf = append(pdf, x)
	}
	kept := pdf[:0]
	for _, x := range pdf {
		if x.w > 0 {
			kept = append(kept, x)
		}
	}
	pdf = kept
	var total float64
	for _, x := range pdf {
		total += x.w
	}
	if total <= 1e-6 {
		for i := range pdf {
			pdf[i].w = 1
		}
		total = float64(len(pdf))
	}
	for i := range pdf {
		pdf[i].w /= total
	}
	return fromPDF(pdf, n)
}

// fromPDF is DistributionSummary.from_pdf over a sorted, normalised PDF.
func fromPDF(pdf []weighted, count int) summary {
	s := summary{count: count}
	if len(pdf) == 0 {
		return s
	}
	cdf := make([]float64, len(pdf))
	var acc float64
	for i, x := range pdf {
		acc += x.w
		cdf[i] = acc
		s.mean += x.v * x.w
	}
	for i, q := range percentileNames {
		k := sort.SearchFloat64s(cdf, q.p) // first index with cdf ≥ p
		if k >= len(pdf) {
			k = len(pdf) - 1
		}
		s.percentiles[i] = pdf[k].v
	}
	s.median = s.percentiles[5]
	best := 0
	for i, x := range pdf {
		if x.w > pdf[best].w {
			best = i
		}
		s.variance += (x.v - s.mean) * (x.v - s.mean) * x.w
	}
	s.mode = pdf[best].v
	s.std = math.Sqrt(s.variance)
	s.min, s.max = pdf[0].v, pdf[len(pdf)-1].v
	s.totalSum = s.mean * float64(count)
	return s
}

// values is from_values over plain values (weight 1 each).
func values(xs []float64) summary {
	w := make([]weighted, len(xs))
	for i, x := range xs {
		w[i] = weighted{x, 1}
	}
	return fromValues(w, nil)
}

// mergeTimes is _merge_sorted_times_with_weights: equal times summed,
// then each run of times within threshold of its first merged into it.
func mergeTimes(ts []weighted, threshold float64) []weighted {
	var out []weighted
	for _, x := range ts {
		if len(out) > 0 && out[len(out)-1].v == x.v {
			out[len(out)-1].w += x.w
			continue
		}
		out = append(out, x)
	}
	if threshold <= 0 || len(out) < 2 {
		return out
	}
	merged := out[:0:0]
	for i := 0; i < len(out); {
		j := i + 1
		w := out[i].w
		for j < len(out) && out[j].v-out[i].v <= threshold {
			w += out[j].w
			j++
		}
		merged = append(merged, weighted{out[i].v, w})
		i = j
	}
	return merged
}

// rateFromTimings is rate_distribution_from_timings: events (time,
// occurrences), within [start, end] when given, each event's rate its
// occurrences over the time around it (half the gaps to its neighbours),
// weighted by that time.
func rateFromTimings(events []weighted, start, end *float64) summary {
	var ts []weighted
	if start != nil {
		ts = append(ts, weighted{*start, 0})
	}
	for _, e := range events {
		if (start == nil || e.v >= *start) && (end == nil || e.v <= *end) {
			ts = append(ts, e)
		}
	}
	if end != nil {
		ts = append(ts, weighted{*end, 0})
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].v < ts[j].v })
	ts = mergeTimes(ts, 1e-4)
	if len(ts) <= 1 {
		c := len(ts)
		return fromValues(nil, &c)
	}
	n := len(ts)
	mid := make([]float64, n-1)
	for i := range n - 1 {
		mid[i] = (ts[i+1].v + ts[i].v) / 2
	}
	durations := make([]float64, n)
	durations[0] = mid[0] - ts[0].v
	for i := 1; i < n-1; i++ {
		durations[i] = mid[i] - mid[i-1]
	}
	durations[n-1] = max(ts[n-1].v-mid[n-2], 1e-6)
	var occ float64
	vals := make([]weighted, n)
	for i, t := range ts {
		vals[i] = weighted{t.w / durations[i], durations[i]}
		occ += t.w
	}
	c := int(math.RoundToEven(occ))
	return fromValues(vals, &c)
}

// interval is a request's (start, end) and weight.
type interval struct{ start, end, w float64 }

// concurrencyFromTimings is concurrency_distribution_from_timings: the
// number of intervals open (within [start, end] when given), weighted by
// how long each level held.
func concurrencyFromTimings(ivs []interval, start, end *float64) summary {
	var kept []interval
	for _, iv := range ivs {
		if (start == nil || iv.end >= *start) && (end == nil || iv.start <= *end) {
			kept = append(kept, iv)
		}
	}
	count := len(kept)
	var ts []weighted
	for _, iv := range kept {
		ts = append(ts, weighted{iv.start, iv.w})
	}
	for _, iv := range kept {
		ts = append(ts, weighted{iv.end, -iv.w})
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].v < ts[j].v })
	ts = mergeTimes(ts, 1e-4)
	if start != nil && len(ts) > 0 {
		k := sort.Search(len(ts), func(i int) bool { return ts[i].v >= *start })
		var prior float64
		for _, t := range ts[:k] {
			prior += t.w
		}
		ts = append([]weighted{{*start, prior}}, ts[k:]...)
	}
	if end != nil && len(ts) > 0 {
		e := sort.Search(len(ts), func(i int) bool { return ts[i].v > *end })
		ts = append(ts[:e:e], weighted{*end, 0})
	}
	conc := make([]float64, len(ts))
	var acc float64
	for i, t := range ts {
		acc += t.w
		conc[i] = max(acc, 0)
	}
	if len(conc) <= 1 {
		if count == 0 {
			return fromValues(nil, nil)
		}
		return values(conc)
	}
	vals := make([]weighted, len(ts)-1)
	anyPositive := false
	for i := range len(ts) - 1 {
		d := max(ts[i+1].v-ts[i].v, 0)
		anyPositive = anyPositive || d > 0
		vals[i] = weighted{conc[i], d}
	}
	if !anyPositive {
		return fromValues(nil, &count)
	}
	return fromValues(vals, &count)
}

// statusDist is a StatusDistributionSummary: a summary of the successful,
// errored and incomplete requests' values, and of all of them.
type statusDist struct{ successful, errored, incomplete, total summary }

// object is the StatusDistributionSummary as GuideLLM writes it.
func (s statusDist) object() *peers.Object {
	o := &peers.Object{}
	o.Set("successful", s.successful.object())
	o.Set("errored", s.errored.object())
	o.Set("incomplete", s.incomplete.object())
	o.Set("total", s.total.object())
	return o
}

// byStatus is a value list of each status.
type byStatus[T any] struct{ successful, incomplete, errored []T }

func (b byStatus[T]) all() []T {
	out := append(append(slices.Clone(b.successful), b.incomplete...), b.errored...)
	return out
}

// statusValues is StatusDistributionSummary.from_values.
func statusValues(b byStatus[weighted]) statusDist {
	return statusDist{successful: fromValues(b.successful, nil), errored: fromValues(b.errored, nil),
		incomplete: fromValues(b.incomplete, nil), total: fromValues(b.all(), nil)}
}

// statusRates is StatusDistributionSummary.rate_distribution_from_timings.
func statusRates(b byStatus[weighted], start, end *float64) statusDist {
	return statusDist{successful: rateFromTimings(b.successful, start, end), errored: rateFromTimings(b.errored, start, end),
		incomplete: rateFromTimings(b.incomplete, start, end), total: rateFromTimings(b.all(), start, end)}
}

// statusConcurrency is
// StatusDistributionSummary.concurrency_distribution_from_timings.
func statusConcurrency(b byStatus[interval], start, end *float64) statusDist {
	return statusDist{successful: concurrencyFromTimings(b.successful, start, end), errored: concurrencyFromTimings(b.errored, start, end),
		incomplete: concurrencyFromTimings(b.incomplete, start, end), total: concurrencyFromTimings(b.all(), start, end)}
}
