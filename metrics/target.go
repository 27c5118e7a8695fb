package metrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Target is a precision a run should reach before it stops: the interval
// of one statistic of one metric no wider than Bound on either side,
// relative to the statistic (time_to_first_token:p99:±5%).
type Target struct {
	// Raw is the target as given.
	Raw string
	// Metric is a headline latency (HeadlineTags) or a throughput
	// (OutputTokenThroughput, RequestThroughput).
	Metric Tag
	// P is the percentile of a latency (99 for p99); 0 for a throughput,
	// whose statistic is its value ("avg").
	P float64
	// Bound is the largest relative half-width allowed (0.05 for ±5%).
	Bound float64
}

// Stat names the target's statistic ("p99", "avg").
func (t Target) Stat() string {
	if t.P == 0 {
		return "avg"
	}
	return "p" + trimFloat(t.P)
}

// String is the target in its own syntax.
func (t Target) String() string {
	return fmt.Sprintf("%s:%s:±%s%%", t.Metric, t.Stat(), trimFloat(100*t.Bound))
}

// targetMetrics are the metrics a target may name.
var targetMetrics = []Tag{TTFT, ITL, RequestLatency, OutputTokenThroughput, RequestThroughput}

func isThroughput(t Tag) bool { return t == OutputTokenThroughput || t == RequestThroughput }

// maxTargetLen bounds a target's text.
const maxTargetLen = 200

// ParseTarget reads one target, METRIC:STAT:±PCT: a headline latency with
// a percentile (time_to_first_token:p99:±5%) or a throughput with avg
// (output_token_throughput:avg:±2%). The sign may be ±, +- or left out;
// the percent sign may not. Errors name the target and what is wrong.
func ParseTarget(s string) (Target, error) {
	fail := func(format string, a ...any) (Target, error) {
		return Target{}, fmt.Errorf("precision target %q: %s", s, fmt.Sprintf(format, a...))
	}
	if len(s) > maxTargetLen {
		return Target{}, fmt.Errorf("precision target of %d bytes: longer than %d", len(s), maxTargetLen)
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return fail("want METRIC:STAT:±PCT, e.g. time_to_first_token:p99:±5%%")
	}
	t := Target{Raw: s, Metric: Tag(parts[0])}
	known := false
	names := make([]string, len(targetMetrics))
	for i, m := range targetMetrics {
		names[i] = string(m)
		known = known || m == t.Metric
	}
	if !known {
		return fail("unknown metric %q (one of %s)", parts[0], strings.Join(names, ", "))
	}
	stat := parts[1]
	switch {
	case isThroughput(t.Metric):
		if stat != "avg" {
			return fail("%s is a rate: its statistic is avg, not %q", t.Metric, stat)
		}
	case strings.HasPrefix(stat, "p"):
		p, err := strconv.ParseFloat(stat[1:], 64)
		if err != nil || !(p > 0 && p < 100) {
			return fail("percentile %q: want p followed by a number between 0 and 100 (p50, p99, p99.9)", stat)
		}
		t.P = p
	default:
		return fail("%s takes a percentile (p50, p90, p99), not %q", t.Metric, stat)
	}
	b := parts[2]
	for _, sign := range []string{"±", "+-", "+/-"} {
		b = strings.TrimPrefix(b, sign)
	}
	num, ok := strings.CutSuffix(b, "%")
	if !ok {
		return fail("bound %q: want a percentage such as ±5%%", parts[2])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0 && v <= 100) {
		return fail("bound %q: want a percentage above 0 and at most 100", parts[2])
	}
	t.Bound = v / 100
	return t, nil
}

// ParseTargets reads several targets (each a string of ParseTarget's, or
// several separated by spaces or commas).
func ParseTargets(items []string) ([]Target, error) {
	var out []Target
	for _, item := range items {
		for _, f := range strings.Fields(strings.ReplaceAll(item, ",", " ")) {
			t, err := ParseTarget(f)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no precision targets (e.g. time_to_first_token:p99:±5%%)")
	}
	return out, nil
}

// DefaultMinRequests is the least number of successful requests before a
// Checker calls targets met: a few lucky requests are no precision.
const DefaultMinRequests = 100

// Checker judges, while a run goes on, whether its targets' intervals are
// as narrow as asked. The composer calls Check once a second with the
// collector's Sample and stops the load once Settled.
type Checker struct {
	targets []Target
	min     int64
	level   float64
}

// CheckerOption configures a Checker.
type CheckerOption func(*Checker)

// WithMinRequests sets the least number of successful requests before the
// targets can be met (DefaultMinRequests).
func WithMinRequests(n int64) CheckerOption { return func(k *Checker) { k.min = max(n, 1) } }

// NewChecker watches targets at PrecisionLevel.
func NewChecker(targets []Target, opts ...CheckerOption) *Checker {
	k := &Checker{targets: targets, min: DefaultMinRequests, level: PrecisionLevel}
	for _, o := range opts {
		o(k)
	}
	return k
}

// PrecisionStatus is a Check's answer.
type PrecisionStatus struct {
	// Requests is how many successful requests the sample holds.
	Requests int64
	// Settled is set when there are at least the minimum requests and
	// every target is met.
	Settled bool
	// Targets holds each target's state, in the targets' order.
	Targets []TargetStatus
}

// TargetStatus is one target's state: its statistic now, its interval,
// and the interval's relative half-width (+Inf while a side is
// unbounded).
type TargetStatus struct {
	Target
	Value, Lo, Hi, HalfWidth float64
	Met                      bool
}

// String words the status in one line: each target's half-width against
// its bound ("time_to_first_token:p99 ±4.8% ≤ ±5%").
func (s PrecisionStatus) String() string {
	parts := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		op := ">"
		if t.Met {
			op = "≤"
		}
		parts[i] = fmt.Sprintf("%s:%s %s %s %s", t.Metric, t.Stat(), FormatHalfWidth(t.HalfWidth), op, FormatHalfWidth(t.Bound))
	}
	return fmt.Sprintf("%s after %d requests", strings.Join(parts, ", "), s.Requests)
}

// Check judges the targets on sample s.
func (k *Checker) Check(s *Sample) PrecisionStatus {
	st := PrecisionStatus{Targets: make([]TargetStatus, len(k.targets))}
	if s != nil {
		st.Requests = s.rows.seen
	}
	st.Settled = st.Requests >= k.min
	cols := map[Tag][]float64{}
	var rates map[Tag]RateCI
	for i, t := range k.targets {
		ts := TargetStatus{Target: t, Value: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), HalfWidth: math.Inf(1)}
		switch {
		case s == nil:
		case isThroughput(t.Metric):
			if rates == nil {
				rates = s.rates(k.level)
			}
			if r, ok := rates[t.Metric]; ok {
				ts.Value, ts.Lo, ts.Hi, ts.HalfWidth = r.Value, r.Lo, r.Hi, r.HalfWidth()
			}
		default:
			xs, ok := cols[t.Metric]
			if !ok {
				xs = s.rows.column(t.Metric)
				cols[t.Metric] = xs
			}
			if len(xs) > 0 {
				c := percentileCI(t.Metric, xs, t.P, k.level)
				ts.Value, ts.Lo, ts.Hi, ts.HalfWidth = c.Value, c.Lo, c.Hi, c.HalfWidth()
			}
		}
		ts.Met = ts.HalfWidth <= t.Bound
		st.Settled = st.Settled && ts.Met
		st.Targets[i] = ts
	}
	return st
}

// Sample is the exact values of the successful profile requests of a run,
// or of one stage, at one moment: what the live precision is judged on.
type Sample struct {
	rows *rowSet
	// now is the run clock when it was taken: the rate series ends at the
	// last whole bin before it.
	now int64
}

// Sample takes the exact values of stage's successful profile requests so
// far (stage < 0: every stage's). Safe to call while records flow. A shard
// hands over its values without copying them (those it has kept do not
// change while it keeps every request: it only appends), so it is held up
// for a round trip, whatever the run's length; the caller's goroutine
// picks the stage's rows.
func (c *Collector) Sample(stage int) *Sample {
	now := c.now()
	out := &Sample{rows: &rowSet{}, now: now}
	for _, s := range c.shards {
		reply := make(chan sampleReply, 1)
		s.in <- msg{kind: msgSample, sample: reply}
		r := <-reply
		kept := &rowSet{rows: r.rows, seen: r.seen}
		if stage >= 0 {
			kept = kept.stage(stage)
		}
		out.rows.rows = append(out.rows.rows, kept.rows...)
		out.rows.seen += kept.seen
	}
	return out
}

// sampleReply is a shard's part of a Sample.
type sampleReply struct {
	rows []row
	seen int64
}

// sample hands over the shard's rows: shared while it keeps every
// request (it appends past them, never into them), a copy once it
// samples (a new request may then take an old one's place).
func (s *shard) sample() sampleReply {
	k := s.keep
	rows := k.rows[:len(k.rows):len(k.rows)]
	if k.seen > int64(len(k.rows)) {
		rows = slices.Clone(rows)
	}
	return sampleReply{rows: rows, seen: k.seen}
}

// rates are the throughputs of the sample so far, each the mean of its
// rate series' whole bins, with their batch-means intervals.
func (s *Sample) rates(level float64) map[Tag]RateCI {
	from, _ := s.rows.span()
	out := map[Tag]RateCI{}
	for _, r := range rateCIs(s.rows, from, s.now, nil, level) {
		out[r.Metric] = r
	}
	return out
}
