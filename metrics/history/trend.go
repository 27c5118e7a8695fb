package history

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/compare"
	"github.com/surgebench/surge/metrics/stats"
)

// TrendQuery asks for one statistic of one metric across the runs a
// filter selects.
type TrendQuery struct {
	Filter
	// Metric and Stat name the statistic ("time_to_first_token", "p99");
	// ParseMetric reads "time_to_first_token.p99".
	Metric, Stat string
	// AnyWorkload keeps runs of every workload; by default the trend
	// follows the newest selected run's workload, as other workloads'
	// numbers do not compare.
	AnyWorkload bool
	// Bootstrap sets the change tests' resamples, level and seed (1000,
	// 0.95, 1 by default).
	Bootstrap stats.Bootstrap
	// MinChange is the smallest relative change worth marking (0.05: 5%):
	// a significant change below it is real but small (Change.Small).
	MinChange float64
}

// ParseMetric reads METRIC[.STAT]; the statistic defaults to p50 for a
// per-request metric (the trend finds out which it is) and avg for a
// run-level one.
func ParseMetric(s string) (metric, stat string, err error) {
	s = strings.TrimSpace(s)
	metric = s
	// The statistic is what follows the last dot, when it names one: a
	// model's metric (model:meta-llama/Llama-3.1-8B:time_to_first_token)
	// has dots of its own.
	if i := strings.LastIndex(s, "."); i >= 0 && isStatName(s[i+1:]) {
		metric, stat = s[:i], s[i+1:]
	} else if !strings.HasPrefix(s, ModelMetricPrefix) {
		metric, stat, _ = strings.Cut(s, ".")
	}
	if metric == "" || strings.ContainsAny(metric, " \t") {
		return "", "", fmt.Errorf("%q: want a metric tag with an optional statistic, e.g. time_to_first_token.p99 or output_token_throughput", s)
	}
	return metric, stat, nil
}

// Trend is a statistic across runs, oldest first.
type Trend struct {
	Metric, Stat, Unit string
	// Workload is the fingerprint the runs share ("" with AnyWorkload).
	Workload string
	Level    float64
	// MinChange is the query's: significant changes below it are small.
	MinChange float64
	Points    []Point
	// Notes say what the trend left out or could not judge.
	Notes []string
}

// Point is one run's value, its interval where the history has one, and
// its change from the point before.
type Point struct {
	Row   Row
	Value float64
	CI    *Interval
	// Change is nil for the first point.
	Change *Change
}

// Change is how a point differs from the one before, and whether that is
// more than noise.
type Change struct {
	// Rel is the relative change (+0.12 is 12% higher); RelLo and RelHi
	// its bootstrap interval (NaN when none).
	Rel, RelLo, RelHi float64
	// Judged is set when a test could be made; Significant when it found
	// the change real.
	Judged, Significant bool
	// Better is "lower", "higher" or "" for the metric; Worse is set for
	// a significant change the wrong way.
	Better string
	Worse  bool
	// Small is set for a significant change under TrendQuery.MinChange.
	Small bool
	// How says which test judged, or why none could.
	How string
}

// Trend reads the statistic across the runs q selects and tests each
// change between consecutive runs as `surge compare` does: a
// per-request statistic by a bootstrap interval of the difference from
// both runs' records (the test's verdict, not the points' look); a
// run-level value, which has one number per run, by whether the two runs'
// intervals are disjoint where the history has them, else not at all.
func (s *Store) Trend(ctx context.Context, q TrendQuery) (*Trend, error) {
	f := q.Filter
	if f.Kind == "" {
		f.Kind = KindRun
	}
	f.Metrics = true
	t := &Trend{Metric: q.Metric, Stat: q.Stat, MinChange: q.MinChange}
	if !q.AnyWorkload && f.Workload == "" {
		newest := f
		newest.Last, newest.Metrics = 1, false
		rows, err := s.List(ctx, newest)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 && rows[0].Workload != "" {
			f.Workload = rows[0].Workload
		}
	}
	t.Workload = f.Workload
	rows, err := s.List(ctx, f)
	if err != nil {
		return nil, err
	}
	if t.Stat == "" {
		t.Stat = defaultStat(rows, q.Metric)
	}
	known := map[string]bool{}
	for _, r := range rows {
		for _, m := range r.Metrics {
			known[m.Metric] = true
		}
		v, ok := r.Value(q.Metric, t.Stat)
		if !ok {
			continue
		}
		if t.Unit == "" {
			t.Unit = unitOf(r, q.Metric)
		}
		t.Points = append(t.Points, Point{Row: r, Value: v, CI: headlineCI(r, q.Metric, t.Stat)})
	}
	if len(t.Points) == 0 {
		if len(rows) == 0 {
			return nil, fmt.Errorf("history %s: no run matches", s.path)
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range known {
				if !yield(k) {
					return
				}
			}
		})
		return nil, fmt.Errorf("history %s: no run has %s.%s (its runs have %s)", s.path, q.Metric, t.Stat, strings.Join(names, ", "))
	}
	if skipped := len(rows) - len(t.Points); skipped > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d matching runs have no %s.%s", skipped, q.Metric, t.Stat))
	}
	bs := q.Bootstrap
	if bs.Iterations <= 0 {
		bs.Iterations = 1000
	}
	if !(bs.Level > 0 && bs.Level < 1) {
		bs.Level = 0.95
	}
	if bs.Seed == 0 {
		bs.Seed = 1
	}
	t.Level = bs.Level
	perRequest := t.Stat != "avg" || hasDistribution(t.Points[0].Row, q.Metric)
	loaded := map[string]*artifact.Run{}
	load := func(dir string) *artifact.Run {
		if r, ok := loaded[dir]; ok {
			return r
		}
		r, err := artifact.Load(dir)
		if err != nil {
			r = nil
		}
		loaded[dir] = r
		return r
	}
	for i := 1; i < len(t.Points); i++ {
		a, b := &t.Points[i-1], &t.Points[i]
		c := &Change{Rel: rel(a.Value, b.Value), RelLo: math.NaN(), RelHi: math.NaN(), Better: compare.Better(q.Metric, t.Unit)}
		if perRequest {
			judgeRecords(c, load(a.Row.Dir), load(b.Row.Dir), a.Row, b.Row, q.Metric, t.Stat, bs)
		} else {
			judgeIntervals(c, a.CI, b.CI)
		}
		if c.Significant && c.Better != "" {
			c.Worse = (c.Rel > 0) == (c.Better == "lower")
		}
		c.Small = c.Significant && math.Abs(c.Rel) < q.MinChange
		b.Change = c
	}
	return t, nil
}

// defaultStat is p50 for a metric the rows have a distribution of, else
// avg.
func defaultStat(rows []Row, metric string) string {
	for _, r := range rows {
		if hasDistribution(r, metric) {
			return "p50"
		}
	}
	return "avg"
}

func hasDistribution(r Row, metric string) bool {
	_, ok := r.Value(metric, "p50")
	return ok
}

func unitOf(r Row, metric string) string {
	for _, m := range r.Metrics {
		if m.Metric == metric {
			return m.Unit
		}
	}
	return ""
}

// headlineCI is the row's interval of metric.stat where it keeps one.
func headlineCI(r Row, metric, stat string) *Interval {
	switch metric + "." + stat {
	case "time_to_first_token.p95":
		return r.TTFTP95CI
	case "request_latency.p95":
		return r.LatencyP95CI
	case "output_token_throughput.avg":
		return r.OutputTokenThroughputCI
	}
	return nil
}

func rel(a, b float64) float64 {
	if a == 0 {
		return math.NaN()
	}
	return b/a - 1
}

// judgeRecords tests a per-request statistic's change with compare's
// bootstrap interval of the difference, from both runs' records.
func judgeRecords(c *Change, a, b *artifact.Run, ra, rb Row, metric, stat string, bs stats.Bootstrap) {
	if a == nil || b == nil {
		c.How = "not judged: a run's artifact folder is gone or unreadable"
		return
	}
	a.Name, b.Name = "#"+strconv.FormatInt(ra.ID, 10), "#"+strconv.FormatInt(rb.ID, 10)
	res, err := compare.Compare([]*artifact.Run{a, b}, compare.Options{Metrics: []string{metric}, Stats: []string{stat}, Bootstrap: bs})
	if err != nil {
		c.How = "not judged: " + err.Error()
		return
	}
	want := ""
	if ra.Kind == KindStage {
		want = ra.LoadMode + " " + strconv.FormatFloat(ra.LoadValue, 'f', -1, 64)
	}
	for _, cmp := range res.Comparisons {
		if cmp.Stage != "" && cmp.Stage != want {
			continue
		}
		for _, m := range cmp.Metrics {
			if m.Tag != metric {
				continue
			}
			for _, sd := range m.Stats {
				if sd.Stat != stat {
					continue
				}
				if sd.TooFew {
					c.How = fmt.Sprintf("not judged: too few requests for %s (want %d in each run)", stat, sd.MinN)
					return
				}
				c.Judged, c.Significant = true, sd.Significant
				c.RelLo, c.RelHi = float64(sd.RelLo), float64(sd.RelHi)
				c.How = fmt.Sprintf("bootstrap %g%% interval of the difference", 100*bs.Level)
				return
			}
		}
	}
	c.How = "not judged: the runs' records have no " + metric
}

// judgeIntervals calls a run-level change significant when the two runs'
// intervals (at metrics.KneeLevel) are disjoint: a conservative test,
// disjoint intervals at a level mean a difference at least that sure.
func judgeIntervals(c *Change, a, b *Interval) {
	if a == nil || b == nil {
		c.How = "not judged: one value per run and no interval to test it by"
		return
	}
	c.Judged = true
	c.Significant = a.Hi < b.Lo || b.Hi < a.Lo
	c.How = fmt.Sprintf("whether the runs' %g%% intervals are disjoint", 100*metrics.KneeLevel)
}
