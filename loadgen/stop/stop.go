// Package stop holds the stop conditions of --stop-on: pure evaluators
// that end a run early when an objective (a latency percentile, the error
// rate) or a server metric (KV-cache usage, requests waiting) stays past
// its bound for a window.
//
//	--stop-on "time_to_first_token:p95:2000@30s error_rate:0.1@10s kv_cache_usage>=0.99@5s"
//
// Objectives take --goodput's syntax with an optional percentile
// (search.ParseObjectives); server metrics are name, an operator (> >= <
// <=) and a bound. "@window" is how long the violation must last (default
// 10 s). A Watch is fed records and server samples and asked, with the run
// clock, whether a condition has tripped.
package stop

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/loadgen/search"
	"github.com/surgebench/surge/metrics"
)

// DefaultWindow is how long a violation must last without "@window".
const DefaultWindow = 10 * time.Second

// minSamples is the least number of requests finished in a window for an
// objective to be judged on it: one slow request is no trend.
const minSamples = 5

// ServerMetrics names the server gauges a condition may watch, as the
// server-metrics export names them.
var ServerMetrics = []string{"kv_cache_usage", "num_requests_running", "num_requests_waiting", "prefix_cache_hit_rate"}

// Condition is one item of --stop-on.
type Condition struct {
	// Raw is the item as given.
	Raw string
	// Objective is set for a request objective.
	Objective *search.Objective
	// Metric, Op and Bound are set for a server metric: Metric Op Bound is
	// the violation (kv_cache_usage >= 0.99).
	Metric string
	Op     string
	Bound  float64
	// Window is how long the violation must last.
	Window time.Duration
}

// Parse reads --stop-on. flag names the flag in errors.
func Parse(flag, s string) ([]Condition, error) {
	var out []Condition
	for _, f := range strings.Fields(strings.ReplaceAll(s, ",", " ")) {
		c := Condition{Raw: f, Window: DefaultWindow}
		expr := f
		if e, w, ok := strings.Cut(f, "@"); ok {
			d, err := time.ParseDuration(w)
			if err != nil {
				if secs, err2 := strconv.ParseFloat(w, 64); err2 == nil {
					d, err = time.Duration(secs*float64(time.Second)), nil
				}
			}
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%s: %q: window %q is not a positive duration (e.g. @30s)", flag, f, w)
			}
			expr, c.Window = e, d
		}
		if i := strings.IndexAny(expr, "<>"); i >= 0 {
			name, rest := expr[:i], expr[i:]
			op := rest[:1]
			if strings.HasPrefix(rest[1:], "=") {
				op += "="
			}
			if !slices.Contains(ServerMetrics, name) {
				return nil, fmt.Errorf("%s: %q: unknown server metric %q (one of %s)", flag, f, name, strings.Join(ServerMetrics, ", "))
			}
			v, err := strconv.ParseFloat(rest[len(op):], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: %q: bound %q is not a number", flag, f, rest[len(op):])
			}
			c.Metric, c.Op, c.Bound = name, op, v
		} else {
			objs, err := search.ParseObjectives(flag, expr)
			if err != nil {
				return nil, err
			}
			c.Objective = &objs[0]
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no conditions in %q (e.g. \"error_rate:0.1@10s\")", flag, s)
	}
	return out, nil
}

// violated says whether a server reading crosses the bound.
func (c *Condition) violated(v float64) bool {
	switch c.Op {
	case ">":
		return v > c.Bound
	case ">=":
		return v >= c.Bound
	case "<":
		return v < c.Bound
	case "<=":
		return v <= c.Bound
	}
	return false
}

// Trip is a condition that ended the run.
type Trip struct {
	Condition Condition
	// Value is the last observation that violated it.
	Value float64
	// Since is when the violation began (run clock).
	Since time.Duration
	// Precision is set, and Condition empty, when the run stopped because
	// every precision target was reached (Watch.Precision).
	Precision *metrics.PrecisionStatus
}

// Reason says in words why the run stopped.
func (t Trip) Reason() string {
	if t.Precision != nil {
		return "--precision: every target reached: " + t.Precision.String()
	}
	name := t.Condition.Metric
	if o := t.Condition.Objective; o != nil {
		name = o.Name()
	}
	return fmt.Sprintf("--stop-on %s: %s was %s for %s (since %s)", t.Condition.Raw, name,
		strconv.FormatFloat(t.Value, 'g', 4, 64), t.Condition.Window, t.Since.Round(100*time.Millisecond))
}

type sample struct {
	at     int64
	failed bool
	values []float64 // per request objective, in the order of reqIdx
}

// Watch evaluates conditions over a run. It is not safe for concurrent
// use: feed it from one goroutine (or guard it).
type Watch struct {
	conds  []Condition
	since  []int64 // violation start per condition, -1: none
	last   []float64
	reqObj []search.Objective
	recent []sample
	server map[string]float64
	window int64 // the longest window, for pruning
	// precise is the newest precision judgement (nil: none given).
	precise *metrics.PrecisionStatus
}

// NewWatch starts watching conds.
func NewWatch(conds []Condition) *Watch {
	w := &Watch{conds: conds, since: make([]int64, len(conds)), last: make([]float64, len(conds)), server: map[string]float64{}}
	for i, c := range conds {
		w.since[i] = -1
		if c.Objective != nil {
			w.reqObj = append(w.reqObj, *c.Objective)
		}
		w.window = max(w.window, int64(c.Window))
	}
	return w
}

// Record adds a finished profile request.
func (w *Watch) Record(r *metrics.Record, v *metrics.Values) {
	if r.Phase != metrics.Profile || len(w.reqObj) == 0 {
		return
	}
	s := sample{at: r.EndNs, failed: r.Failed(), values: make([]float64, len(w.reqObj))}
	for i, o := range w.reqObj {
		s.values[i] = math.NaN()
		if o.Tag != search.ErrorRate && !s.failed && v != nil {
			s.values[i] = v.Get(metrics.Tag(o.Tag))
		}
	}
	w.recent = append(w.recent, s)
}

// Gauges is a scrape of a server's gauges, read by the names
// ServerMetrics lists. The composer hands in its sampler's scrapes
// (telemetry.ServerSample): the engine knows no sampler.
type Gauges interface {
	Gauge(name string) float64
}

// Server records a scrape of the server's gauges.
func (w *Watch) Server(g Gauges) {
	for _, name := range ServerMetrics {
		w.server[name] = g.Gauge(name)
	}
}

// Precision records the newest judgement of the run's precision targets
// (metrics.Checker, once a second on the collector's Sample): the next
// Check stops the run once it is Settled. A run may stop on precision
// alone (NewWatch with no conditions).
func (w *Watch) Precision(st metrics.PrecisionStatus) { w.precise = &st }

// Check evaluates every condition at now (run clock) and returns the first
// that has been violated for its whole window, or nil; failing that, a
// Trip for the precision targets once they are all reached. Call it
// periodically (every second or so): a violation starts at the first
// check that sees it and ends at the first that does not.
func (w *Watch) Check(now int64) *Trip {
	// Requests older than the longest window no longer count.
	cut := 0
	for cut < len(w.recent) && w.recent[cut].at < now-w.window {
		cut++
	}
	w.recent = w.recent[cut:]
	obj := 0
	for i := range w.conds {
		c := &w.conds[i]
		var v float64
		violated, judged := false, true
		if c.Objective != nil {
			v, judged = w.observe(obj, *c.Objective, now-int64(c.Window))
			obj++
			violated = judged && !c.Objective.Met(v)
		} else {
			var ok bool
			v, ok = w.server[c.Metric]
			judged = ok && !math.IsNaN(v)
			violated = judged && c.violated(v)
		}
		switch {
		case !judged:
			continue // too little to say: the state holds
		case !violated:
			w.since[i] = -1
			continue
		case w.since[i] < 0:
			w.since[i] = now
		}
		w.last[i] = v
		if now-w.since[i] >= int64(c.Window) {
			return &Trip{Condition: *c, Value: v, Since: time.Duration(w.since[i])}
		}
	}
	if p := w.precise; p != nil && p.Settled {
		return &Trip{Precision: p, Since: time.Duration(now)}
	}
	return nil
}

// observe computes request objective i over the requests finished since
// from; judged is false with fewer than minSamples.
func (w *Watch) observe(i int, o search.Objective, from int64) (float64, bool) {
	var xs []float64
	n, failed := 0, 0
	for _, s := range w.recent {
		if s.at < from {
			continue
		}
		n++
		if s.failed {
			failed++
		} else if !math.IsNaN(s.values[i]) {
			xs = append(xs, s.values[i])
		}
	}
	if n < minSamples {
		return math.NaN(), false
	}
	if o.Tag == search.ErrorRate {
		return float64(failed) / float64(n), true
	}
	if len(xs) == 0 {
		// Every request failed: no latency to judge, and the objective is
		// certainly not met.
		if o.HigherIsBetter {
			return 0, true
		}
		return math.Inf(1), true
	}
	return search.Percentile(xs, o.Percentile), true
}
