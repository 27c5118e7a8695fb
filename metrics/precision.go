package metrics

import (
	"fmt"
	"math"
	"time"

	"github.com/surgebench/surge/metrics/stats"
)

// PrecisionLevel is the confidence level of every interval the summary
// reports.
const PrecisionLevel = 0.95

// ThinTail is the fewest values beyond a percentile for it to be printed
// without a mark: a p99 of fewer than 1,000 requests rests on fewer than
// 10 of them, and its interval is wide or open.
const ThinTail = 10

// HeadlineTags are the latency metrics whose percentiles carry intervals,
// and HeadlinePercentiles those percentiles (p95 is the knee's).
var (
	HeadlineTags        = []Tag{TTFT, ITL, RequestLatency}
	HeadlinePercentiles = []float64{50, 90, 95, 99}
)

// Precision is how precise a summary's headline numbers are: the
// confidence interval of each, computed at the end from the exact values
// of the successful requests (distribution-free order-statistic intervals
// for the percentiles, batch means for the throughputs).
type Precision struct {
	// Level is the intervals' confidence level (0.95).
	Level float64
	// Requests is how many successful requests the numbers describe; Kept
	// how many of them the intervals rest on: fewer only past the
	// collector's bound on kept values (a uniform sample then, and the
	// intervals are wider than all the requests would give).
	Requests, Kept int64
	// Percentiles are the latency percentiles' intervals (HeadlineTags ×
	// HeadlinePercentiles), Throughputs the output token and request
	// throughputs'.
	Percentiles []PercentileCI
	Throughputs []RateCI
}

// PercentileCI is a latency percentile with its confidence interval.
type PercentileCI struct {
	Metric Tag
	// P is the percentile (99 for p99).
	P float64
	// N is how many values the interval rests on; Tail how many of them
	// lie beyond the percentile (stats.TailSamples).
	N, Tail int
	// Value is the exact percentile of the values (numpy's linear
	// interpolation, as AIPerf's); Lo and Hi bound the interval, −Inf or
	// +Inf where the sample is too small to bound that side.
	Value, Lo, Hi float64
}

// Stat names the percentile as the exports do ("p99").
func (p PercentileCI) Stat() string { return "p" + trimFloat(p.P) }

// HalfWidth is the interval's half-width relative to the value (0.05:
// ±5%); +Inf when a side is unbounded or the value is 0.
func (p PercentileCI) HalfWidth() float64 { return relHalf(p.Value, p.Lo, p.Hi) }

// Thin reports whether the percentile rests on fewer than ThinTail
// values beyond it.
func (p PercentileCI) Thin() bool { return p.Tail < ThinTail }

// Footnote is the line that marks a thin percentile ("p99 of time to first
// token from 180 requests rests on 1 value above it: its interval is
// ±40%"); empty when the percentile is not thin.
func (p PercentileCI) Footnote() string {
	if !p.Thin() {
		return ""
	}
	side := "above"
	if p.P < 50 {
		side = "below"
	}
	values := "values"
	if p.Tail == 1 {
		values = "value"
	}
	return fmt.Sprintf("%s %s from %d requests rests on %d %s %s it: its interval is %s",
		nameOf(p.Metric), p.Stat(), p.N, p.Tail, values, side, FormatHalfWidth(p.HalfWidth()))
}

// RateCI is a throughput with its confidence interval by batch means.
type RateCI struct {
	Metric Tag
	// Value is the throughput as the summary reports it; Lo and Hi bound
	// its interval (±Inf with fewer than two batches).
	Value, Lo, Hi float64
	// Batches and BatchSec are the batch means' batches and their length.
	Batches  int
	BatchSec float64
	// Identical is set when every batch had the same throughput
	// (completions in step): the interval is not estimable (±Inf), never
	// of zero width.
	Identical bool
}

// HalfWidth is the interval's half-width relative to the value.
func (r RateCI) HalfWidth() float64 { return relHalf(r.Value, r.Lo, r.Hi) }

func relHalf(v, lo, hi float64) float64 {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || v == 0 || math.IsNaN(v) {
		return math.Inf(1)
	}
	return (hi - lo) / 2 / math.Abs(v)
}

// FormatHalfWidth writes a relative half-width as the console shows it:
// "±4.2%", "±12%", "±∞".
func FormatHalfWidth(h float64) string {
	switch {
	case math.IsInf(h, 1) || math.IsNaN(h):
		return "±∞"
	case h < 0.1:
		return fmt.Sprintf("±%.1f%%", 100*h)
	}
	return fmt.Sprintf("±%.0f%%", 100*h)
}

func trimFloat(v float64) string { return fmt.Sprintf("%g", v) }

// nameOf is a metric's display name without its unit ("Time to First
// Token"); the tag itself for one without a definition.
func nameOf(t Tag) string {
	for _, defs := range [][]Def{RequestDefs, RunDefs} {
		for _, d := range defs {
			if d.Tag == t {
				return d.Name
			}
		}
	}
	return string(t)
}

// percentileCI is the interval of the p-th percentile of xs (reordered).
func percentileCI(t Tag, xs []float64, p, level float64) PercentileCI {
	q := p / 100
	iv := stats.QuantileInterval(xs, q, level)
	return PercentileCI{Metric: t, P: p, N: len(xs), Tail: stats.TailSamples(len(xs), q),
		Value: stats.QuantileOf(xs, q), Lo: iv.Lo, Hi: iv.Hi}
}

// precisionOf computes the intervals of the percentiles of e's requests
// and of the throughputs of all's over [from, to) (all is e, or more when
// e holds the requests sent in a window and all every request whose
// tokens may arrive in it); point holds the throughputs the summary
// reports, which their intervals are centred on.
func precisionOf(e, all *rowSet, from, to int64, point map[Tag]float64, level float64) *Precision {
	if e == nil || len(e.rows) == 0 {
		return nil
	}
	pr := &Precision{Level: level, Requests: e.seen, Kept: int64(len(e.rows))}
	for _, t := range HeadlineTags {
		xs := e.column(t)
		if len(xs) == 0 {
			continue
		}
		for _, p := range HeadlinePercentiles {
			pr.Percentiles = append(pr.Percentiles, percentileCI(t, xs, p, level))
		}
	}
	pr.Throughputs = rateCIs(all, from, to, point, level)
	return pr
}

// rateCIs are the throughputs' intervals by batch means over the rate
// series of [from, to). A batch is at least one mean request latency
// long: a request's tokens are spread over its own time, so bins closer
// than that are correlated by construction. Each interval is centred on
// the throughput point gives; with point nil, on the series' own mean
// (a live run's, whose summary is not computed yet).
func rateCIs(e *rowSet, from, to int64, point map[Tag]float64, level float64) []RateCI {
	tokens, done := e.rates(from, to, binNs)
	minSize := 1
	if lat := e.column(RequestLatency); len(lat) > 0 {
		mean, _ := stats.MeanVar(lat)
		minSize = max(1, int(math.Ceil(mean*float64(time.Millisecond)/float64(binNs))))
	}
	var out []RateCI
	for _, s := range []struct {
		tag    Tag
		series []float64
	}{{OutputTokenThroughput, tokens}, {RequestThroughput, done}} {
		bm := stats.BatchMeansCI(s.series, minSize, level)
		v, ok := point[s.tag]
		if point == nil {
			v, ok = bm.Mean, true
		}
		if !ok || !(v > 0) {
			continue
		}
		r := RateCI{Metric: s.tag, Value: v, Lo: math.Inf(-1), Hi: math.Inf(1), Batches: bm.Batches,
			BatchSec: float64(int64(bm.Size)*binNs) / 1e9, Identical: bm.Identical}
		if !math.IsInf(bm.Half, 0) && bm.Mean > 0 {
			rel := bm.Half / bm.Mean
			r.Lo, r.Hi = max(0, v*(1-rel)), v*(1+rel)
		}
		out = append(out, r)
	}
	return out
}

// Percentile returns the interval of metric t's p-th percentile (nil:
// none).
func (p *Precision) Percentile(t Tag, pct float64) *PercentileCI {
	if p == nil {
		return nil
	}
	for i := range p.Percentiles {
		if p.Percentiles[i].Metric == t && p.Percentiles[i].P == pct {
			return &p.Percentiles[i]
		}
	}
	return nil
}

// Throughput returns the interval of throughput t (nil: none).
func (p *Precision) Throughput(t Tag) *RateCI {
	if p == nil {
		return nil
	}
	for i := range p.Throughputs {
		if p.Throughputs[i].Metric == t {
			return &p.Throughputs[i]
		}
	}
	return nil
}

// Footnotes are the thin percentiles' lines (PercentileCI.Footnote), for
// the percentiles the console shows (p50, p90, p99).
func (p *Precision) Footnotes() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Percentiles {
		if c.P == 95 {
			continue
		}
		if f := c.Footnote(); f != "" {
			out = append(out, f)
		}
	}
	return out
}
