// Package search finds a server's capacity: the highest request rate (or
// concurrency) it sustains within service-level objectives. It is pure
// logic — a bracketing step-up then bisection (Run), and a judge that says
// when a probe's samples are stable enough to pass or fail it (Judge) —
// driven through a one-method Prober so that it is tested with a fake
// server; Live is the prober that steers a real run's Controller.
package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// ErrorRate is the pseudo-metric of an objective on the fraction of failed
// requests ("error_rate:0.01").
const ErrorRate = "error_rate"

// Throughput is the implicit objective of a request-rate search: requests
// must complete at (nearly) the offered rate, or the server is falling
// behind however good the latencies of the requests that finished look.
const Throughput = "request_throughput"

// DefaultPercentile is the percentile an objective without one is judged
// at.
const DefaultPercentile = 95

// The window-level pseudo-metrics of AIPerf's adaptive-scale SLAs, each
// a rate or a proportion of a probe's requests rather than a per-request
// value.
const (
	// RequestErrorRate is failed requests over finished ones, cancelled
	// requests left out of both (AIPerf's request_error_rate); ErrorRate
	// counts every failure, cancellations included.
	RequestErrorRate = "request_error_rate"
	// SuccessRate is successful requests over all finished ones.
	SuccessRate = "success_rate"
	// CancellationRate is cancelled requests over all finished ones.
	CancellationRate = "cancellation_rate"
	// OutputThroughput is the output tokens of successful requests a
	// second, over the span their completions cover.
	OutputThroughput = "output_token_throughput"
	// Goodput is requests a second that met every per-request objective;
	// GoodputRatio their share of all finished requests.
	Goodput      = "goodput"
	GoodputRatio = "goodput_ratio"
)

// Statistics of a per-request metric other than a percentile.
const (
	StatAvg = "avg"
	StatMin = "min"
	StatMax = "max"
)

// windowTags are the pseudo-metrics read off a probe's requests as a whole.
var windowTags = map[string]bool{ErrorRate: true, Throughput: true, RequestErrorRate: true, SuccessRate: true,
	CancellationRate: true, OutputThroughput: true, Goodput: true, GoodputRatio: true}

// Window reports whether the objective is on a probe's requests as a whole
// (a rate or a proportion) rather than on each request's value.
func (o Objective) Window() bool { return windowTags[o.Tag] }

// Objective is one SLO of a search or a stop condition: the metric's
// percentile must stay at or under Limit (at or over it for a metric where
// higher is better).
type Objective struct {
	// Tag is a per-request metric tag (time_to_first_token, …) or
	// ErrorRate.
	Tag string
	// Percentile is 1–100 (ignored for ErrorRate).
	Percentile float64
	// Limit is in the metric's display unit (ms for latencies; a fraction
	// for ErrorRate).
	Limit float64
	// HigherIsBetter makes Limit a floor.
	HigherIsBetter bool
	// Stat, when set (StatAvg, StatMin, StatMax), is the statistic judged
	// instead of the percentile.
	Stat string
	// Strict makes the limit exclusive (AIPerf's lt and gt): a value at it
	// misses.
	Strict bool
}

// String is the objective as the flag takes it: time_to_first_token:p95:200.
func (o Objective) String() string {
	if o.Window() {
		return o.Tag + ":" + strconv.FormatFloat(o.Limit, 'g', -1, 64)
	}
	return fmt.Sprintf("%s:%s:%s", o.Tag, o.statName(), strconv.FormatFloat(o.Limit, 'g', -1, 64))
}

// statName is the statistic as AIPerf writes it: p95, avg, min, max.
func (o Objective) statName() string {
	if o.Stat != "" {
		return o.Stat
	}
	return "p" + strconv.FormatFloat(o.Percentile, 'g', -1, 64)
}

// Name is the observed quantity: p95(time_to_first_token), error_rate.
func (o Objective) Name() string {
	if o.Window() {
		return o.Tag
	}
	return fmt.Sprintf("%s(%s)", o.statName(), o.Tag)
}

// Met reports whether an observed value meets the objective (NaN does
// not).
func (o Objective) Met(v float64) bool {
	switch {
	case math.IsNaN(v):
		return false
	case o.HigherIsBetter && o.Strict:
		return v > o.Limit
	case o.HigherIsBetter:
		return v >= o.Limit
	case o.Strict:
		return v < o.Limit
	}
	return v <= o.Limit
}

// Excess is how far v is past the limit as a ratio ≥ 0 (0: met; 0.5: 50%
// worse than allowed). It ranks which objective limits a probe.
func (o Objective) Excess(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return math.Inf(1)
	case o.Strict && v == o.Limit:
		return math.SmallestNonzeroFloat64 // at an exclusive limit: just missed
	case o.HigherIsBetter:
		if v >= o.Limit {
			return 0
		}
		if v <= 0 {
			return math.Inf(1)
		}
		return o.Limit/v - 1
	case o.Limit == 0:
		if v <= 0 {
			return 0
		}
		return math.Inf(1)
	default:
		return max(v/o.Limit-1, 0)
	}
}

// ParseObjectives reads SLOs in --goodput's syntax with an optional
// percentile per item: "time_to_first_token:p99:200 inter_token_latency:20
// error_rate:0.01". Items are separated by spaces or commas; an item
// without a percentile is judged at DefaultPercentile; values are in the
// metric's display unit. flag names the flag in errors.
func ParseObjectives(flag, s string) ([]Objective, error) {
	var out []Objective
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' }) {
		parts := strings.Split(f, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
			return nil, fmt.Errorf("%s: %q is not tag:value or tag:pNN:value (e.g. time_to_first_token:p95:200)", flag, f)
		}
		o := Objective{Tag: parts[0], Percentile: DefaultPercentile}
		if o.Tag == ErrorRate {
			if len(parts) == 3 {
				return nil, fmt.Errorf("%s: %s takes no percentile (error_rate:0.01 is a fraction of requests)", flag, ErrorRate)
			}
		} else {
			def, ok := requestDef(o.Tag)
			if !ok {
				return nil, fmt.Errorf("%s: unknown metric %q (use a per-request metric such as time_to_first_token, inter_token_latency, request_latency, or error_rate)", flag, o.Tag)
			}
			o.HigherIsBetter = def.HigherIsBetter
		}
		if len(parts) == 3 {
			p := strings.TrimPrefix(strings.ToLower(parts[1]), "p")
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || !(v > 0 && v <= 100) {
				return nil, fmt.Errorf("%s: %s: percentile %q must be p1 … p100 (e.g. p99)", flag, o.Tag, parts[1])
			}
			o.Percentile = v
		}
		val := parts[len(parts)-1]
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s: %s: %q is not a non-negative number", flag, o.Tag, val)
		}
		if o.Tag == ErrorRate && v > 1 {
			return nil, fmt.Errorf("%s: %s %v: give a fraction between 0 and 1 (0.01 for 1%%)", flag, ErrorRate, v)
		}
		o.Limit = v
		key := o.Name()
		if seen[key] {
			return nil, fmt.Errorf("%s: %s given twice", flag, key)
		}
		seen[key] = true
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no objectives in %q (e.g. \"time_to_first_token:p95:200\")", flag, s)
	}
	return out, nil
}

func requestDef(tag string) (metrics.Def, bool) {
	for _, d := range metrics.RequestDefs {
		if string(d.Tag) == tag && d.Tag != metrics.ICL {
			return d, true
		}
	}
	return metrics.Def{}, false
}
