// Package compare judges whether runs differ or only look different: for
// each metric, each run's value, its difference from the baseline (the
// first run), a seeded bootstrap confidence interval of that difference
// for p50/p90/p99, a Mann–Whitney rank test of the whole distributions,
// and a one-line verdict. Check says first whether the runs measured the
// same workload at all (their fingerprints).
package compare

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/stats"
)

// DefaultMetrics are the per-request metrics compared when none are named
// (those a run lacks, say ITL of a non-streaming run, are left out).
var DefaultMetrics = append([]string{
	"time_to_first_token", "inter_token_latency", "request_latency",
	"output_token_throughput_per_user", "output_sequence_length",
	// The parts of the time breakdown, where the runs have them: which
	// part moved (docs/time-breakdown.md).
}, breakdownTags()...)

// breakdownTags are the time breakdown's parts as metric tags.
func breakdownTags() []string {
	var tags []string
	for _, p := range artifact.BreakdownParts {
		tags = append(tags, artifact.BreakdownTag(p))
	}
	return tags
}

// DefaultStats are the statistics compared for every per-request metric.
var DefaultStats = []string{"p50", "p90", "p99"}

// RunLevelMetrics are the run-level values shown (one value per run, so no
// interval): from the summary export where it has them, else computed from
// the records.
var RunLevelMetrics = []string{"request_throughput", "output_token_throughput", "request_count", "error_request_count",
	"cost_per_1m_output_tokens", "cost_per_1m_total_tokens"}

// Options configure Compare.
type Options struct {
	// Metrics are the per-request metric tags to compare (nil:
	// DefaultMetrics).
	Metrics []string
	// Stats are compared besides DefaultStats ("avg", "p95", "p99.9").
	Stats []string
	// Bootstrap sets the intervals' resamples, level and seed.
	Bootstrap stats.Bootstrap
}

// Num is a number in the JSON output: null when NaN or infinite (a
// difference from a zero baseline, a missing value).
type Num float64

// MarshalJSON writes n, or null when it is not finite.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 10, 64), nil
}

// Result is a comparison of every run with the baseline (the first).
type Result struct {
	Baseline   string  `json:"baseline"`
	Level      float64 `json:"confidence_level"`
	Iterations int     `json:"bootstrap_iterations"`
	Seed       uint64  `json:"seed"`
	// Check is whether the runs measured the same workload.
	Check       Check        `json:"check"`
	Runs        []Run        `json:"runs"`
	Comparisons []Comparison `json:"comparisons"`
	// Warnings are things to know before trusting the numbers.
	Warnings []string `json:"warnings"`
}

// Run is one run as the comparison saw it.
type Run struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Requests int    `json:"requests"`
	Failed   int    `json:"failed"`
	Workload string `json:"workload,omitempty"`
}

// Comparison is one run (B) against the baseline (A), for the whole runs
// or for one stage of two sweeps.
type Comparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// Stage names the sweep stage compared ("concurrency 8"); empty for
	// whole runs.
	Stage    string     `json:"stage,omitempty"`
	Metrics  []Metric   `json:"metrics"`
	RunLevel []RunLevel `json:"run_level"`
}

// Metric is one per-request metric compared.
type Metric struct {
	Tag  string `json:"metric"`
	Unit string `json:"unit"`
	// Better is "lower", "higher" or "" (neither: a length).
	Better string `json:"better,omitempty"`
	NA     int    `json:"n_a"`
	NB     int    `json:"n_b"`
	// MannWhitney tests whether B's values tend to be larger or smaller
	// than A's.
	MannWhitney MannWhitney `json:"mann_whitney"`
	Stats       []StatDiff  `json:"stats"`
	// Verdict is the one line that sums the metric up.
	Verdict string `json:"verdict"`
}

// MannWhitney is the rank test's result.
type MannWhitney struct {
	U        Num  `json:"u"`
	P        Num  `json:"p"`
	Exact    bool `json:"exact"`
	BGreater Num  `json:"p_b_greater"`
	// Significant is P below 1 − the confidence level.
	Significant bool `json:"significant"`
}

// StatDiff is one statistic of a metric: both runs' values, the
// difference, its interval and whether it is significant.
type StatDiff struct {
	Stat        string `json:"stat"`
	A           Num    `json:"a"`
	B           Num    `json:"b"`
	Abs         Num    `json:"diff"`
	Rel         Num    `json:"rel"`
	AbsLo       Num    `json:"diff_ci_lo"`
	AbsHi       Num    `json:"diff_ci_hi"`
	RelLo       Num    `json:"rel_ci_lo"`
	RelHi       Num    `json:"rel_ci_hi"`
	Significant bool   `json:"significant"`
	// TooFew is set when either run has fewer than MinN values: too few
	// for the statistic (at least one value beyond p99 needs 100), so it
	// is never called significant.
	TooFew  bool   `json:"too_few,omitempty"`
	MinN    int    `json:"min_n"`
	Verdict string `json:"verdict"`
}

// RunLevel is a run-level value of both runs (no interval: one value per
// run).
type RunLevel struct {
	Tag  string `json:"metric"`
	Unit string `json:"unit"`
	A    Num    `json:"a"`
	B    Num    `json:"b"`
	Abs  Num    `json:"diff"`
	Rel  Num    `json:"rel"`
}

// Compare compares every run of runs (two or more) with the first. The
// runs' names should be unique (artifact.LoadAll makes them so).
func Compare(runs []*artifact.Run, o Options) (*Result, error) {
	if len(runs) < 2 {
		return nil, errors.New("compare needs two runs or more: a baseline and a run to compare with it")
	}
	bs := o.Bootstrap
	if bs.Iterations <= 0 {
		bs.Iterations = 2000
	}
	if bs.Level <= 0 || bs.Level >= 1 {
		bs.Level = 0.95
	}
	statNames := slices.Clone(DefaultStats)
	for _, s := range o.Stats {
		if !slices.Contains(statNames, s) {
			statNames = append(statNames, s)
		}
	}
	for _, s := range statNames {
		if _, ok := statLevel(s); !ok {
			return nil, fmt.Errorf("unknown statistic %q (want avg or pN, 0 < N < 100: p50, p99.9)", s)
		}
	}
	res := &Result{Baseline: runs[0].Name, Level: bs.Level, Iterations: bs.Iterations, Seed: bs.Seed,
		Check: Fingerprints(runs), Warnings: []string{}}
	for _, r := range runs {
		ri := Run{Name: r.Name, Dir: r.Dir}
		for _, rec := range r.Profile() {
			ri.Requests++
			if rec.Failed() {
				ri.Failed++
			}
		}
		if r.Summary != nil {
			ri.Workload, _ = r.Summary.Fingerprint["workload"].(string)
		}
		res.Runs = append(res.Runs, ri)
	}
	metrics := o.Metrics
	if metrics == nil {
		metrics = DefaultMetrics
	}
	base := groups(runs[0])
	for _, r := range runs[1:] {
		other := groups(r)
		pairs, warn := match(runs[0], r, base, other)
		res.Warnings = append(res.Warnings, warn...)
		for _, p := range pairs {
			c := Comparison{A: runs[0].Name, B: r.Name, Stage: p.a.label}
			for _, tag := range metrics {
				av, bv := values(p.a.recs, tag), values(p.b.recs, tag)
				if len(av) == 0 || len(bv) == 0 {
					if o.Metrics != nil && (len(av) > 0 || len(bv) > 0) {
						res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s has %d values, %s %d: not compared", tag, runs[0].Name, len(av), r.Name, len(bv)))
					}
					continue
				}
				c.Metrics = append(c.Metrics, compareMetric(tag, unitOf(runs[0], r, tag), av, bv, statNames, bs,
					stream(runs[0].Name, r.Name, p.a.label, tag), r.Name))
			}
			c.RunLevel = runLevel(runs[0], r, p)
			res.Comparisons = append(res.Comparisons, c)
		}
	}
	return res, nil
}

// statLevel returns the quantile of a statistic's name ("p99" → 0.99);
// the mean is −1.
func statLevel(name string) (float64, bool) {
	if name == "avg" {
		return -1, true
	}
	rest, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(rest, 64)
	if err != nil || !(f > 0 && f < 100) || strings.ContainsAny(rest, "eE+-") {
		return 0, false
	}
	return f / 100, true
}

// minSample is the fewest values that say anything of a statistic: one
// value beyond the quantile on its far side (100 for p99, 10 for p90, 2
// for the median and the mean).
func minSample(q float64) int {
	if q < 0 {
		return 2
	}
	return max(2, int(math.Ceil(1/math.Min(q, 1-q)-1e-9)))
}

// stream derives the bootstrap's random stream from what is compared, so
// a result depends on the seed and its own samples only, not on which
// other metrics or runs were compared alongside.
func stream(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Better says which way a metric improves: latencies (ms) and prices are
// better lower, rates better higher, lengths neither.
func Better(tag, unit string) string {
	switch {
	case strings.HasPrefix(unit, "USD") || strings.HasPrefix(tag, "cost_"):
		return "lower"
	case unit == "ms" || strings.Contains(tag, "latency") || strings.HasPrefix(tag, "time_to_"):
		return "lower"
	case strings.Contains(unit, "/s") || strings.Contains(tag, "throughput") || tag == "goodput":
		return "higher"
	case strings.Contains(tag, "error"):
		return "lower"
	}
	return ""
}

func compareMetric(tag, unit string, av, bv []float64, statNames []string, bs stats.Bootstrap, seed uint64, bName string) Metric {
	a, b := stats.Sorted(av), stats.Sorted(bv)
	m := Metric{Tag: tag, Unit: unit, Better: Better(tag, unit), NA: len(a), NB: len(b)}
	mw := stats.MannWhitneyU(a, b)
	m.MannWhitney = MannWhitney{U: Num(mw.U), P: Num(mw.P), Exact: mw.Exact, BGreater: Num(mw.BGreater),
		Significant: mw.P < 1-bs.Level}
	for _, s := range statNames {
		q, _ := statLevel(s)
		var d stats.Diff
		if q < 0 {
			d = bs.Mean(a, b)
		} else {
			d = bs.Quantile(a, b, q, seed^stream(s))
		}
		sd := StatDiff{Stat: s, A: Num(d.A), B: Num(d.B), Abs: Num(d.Abs), Rel: Num(d.Rel),
			AbsLo: Num(d.AbsCI.Lo), AbsHi: Num(d.AbsCI.Hi), RelLo: Num(d.RelCI.Lo), RelHi: Num(d.RelCI.Hi),
			Significant: d.Significant(), MinN: minSample(q)}
		if min(len(a), len(b)) < sd.MinN {
			// p99 of 20 requests is their maximum: resampling it says
			// nothing (the bootstrap of an extreme is inconsistent).
			sd.TooFew, sd.Significant = true, false
		}
		sd.Verdict = statVerdict(bName, tag, unit, m.Better, sd, bs.Level)
		m.Stats = append(m.Stats, sd)
	}
	m.Verdict = metricVerdict(bName, tag, unit, m, bs.Level)
	return m
}

// values are a metric's values over the successful records.
func values(recs []artifact.Record, tag string) []float64 {
	var out []float64
	for _, r := range recs {
		if r.Failed() {
			continue
		}
		if v, ok := r.Metrics[tag]; ok {
			out = append(out, v)
		}
	}
	return out
}

func unitOf(a, b *artifact.Run, tag string) string {
	if u := a.Unit(tag); u != "" {
		return u
	}
	return b.Unit(tag)
}

// group is the records of one whole run or one sweep stage.
type group struct {
	label string // "" for a whole run, else "concurrency 8"
	stage int    // the stage's index; −1 for a whole run
	mode  string
	value float64
	recs  []artifact.Record
}

// groups splits a run into its sweep stages (when the summary lists two
// or more and the records name them), else one whole-run group.
func groups(r *artifact.Run) []group {
	recs := r.Profile()
	whole := []group{{stage: -1, recs: recs}}
	if r.Summary == nil || len(r.Summary.Stages) < 2 {
		return whole
	}
	by := map[int][]artifact.Record{}
	for _, rec := range recs {
		by[rec.Stage] = append(by[rec.Stage], rec)
	}
	if len(by[-1]) > 0 {
		return whole // records that name no stage: not a sweep we can split
	}
	var out []group
	for _, st := range r.Summary.Stages {
		out = append(out, group{label: fmt.Sprintf("%s %s", st.Mode, strconv.FormatFloat(st.Value, 'f', -1, 64)),
			stage: st.Index, mode: st.Mode, value: st.Value, recs: by[st.Index]})
	}
	return out
}

type pair struct{ a, b group }

// match pairs the baseline's groups with another run's: stages by mode
// and value, or the whole runs.
func match(ra, rb *artifact.Run, a, b []group) ([]pair, []string) {
	if len(a) == 1 && len(b) == 1 {
		return []pair{{a[0], b[0]}}, nil
	}
	if len(a) == 1 || len(b) == 1 {
		sweep, single := ra.Name, rb.Name
		if len(b) > 1 {
			sweep, single = rb.Name, ra.Name
		}
		return []pair{{group{stage: -1, recs: ra.Profile()}, group{stage: -1, recs: rb.Profile()}}},
			[]string{fmt.Sprintf("%s is a sweep and %s is not: comparing all of their requests, stages pooled", sweep, single)}
	}
	var out []pair
	var warn []string
	for _, ga := range a {
		found := false
		for _, gb := range b {
			if ga.mode == gb.mode && ga.value == gb.value {
				out = append(out, pair{ga, gb})
				found = true
				break
			}
		}
		if !found {
			warn = append(warn, fmt.Sprintf("%s's stage %s has no match in %s", ra.Name, ga.label, rb.Name))
		}
	}
	for _, gb := range b {
		if !slices.ContainsFunc(a, func(ga group) bool { return ga.mode == gb.mode && ga.value == gb.value }) {
			warn = append(warn, fmt.Sprintf("%s's stage %s has no match in %s", rb.Name, gb.label, ra.Name))
		}
	}
	return out, warn
}

// runLevel compares the run-level values of a pair: the summary's (of the
// whole run, or of the stage) where it has them, else computed from the
// records.
func runLevel(ra, rb *artifact.Run, p pair) []RunLevel {
	var out []RunLevel
	for _, tag := range RunLevelMetrics {
		av, unit, okA := levelValue(ra, p.a, tag)
		bv, unitB, okB := levelValue(rb, p.b, tag)
		if !okA && !okB {
			continue
		}
		if unit == "" {
			unit = unitB
		}
		if !okA {
			av = math.NaN()
		}
		if !okB {
			bv = math.NaN()
		}
		rl := RunLevel{Tag: tag, Unit: unit, A: Num(av), B: Num(bv), Abs: Num(bv - av), Rel: Num(math.NaN())}
		if av != 0 {
			rl.Rel = Num(bv/av - 1)
		}
		out = append(out, rl)
	}
	return out
}

func levelValue(r *artifact.Run, g group, tag string) (float64, string, bool) {
	if r.Summary != nil {
		if g.stage < 0 {
			if s, ok := r.Summary.Metrics[tag]; ok {
				return s.Avg, s.Unit, true
			}
		} else {
			for _, st := range r.Summary.Stages {
				if st.Index != g.stage {
					continue
				}
				switch tag {
				case "request_throughput":
					return st.RequestThroughput, "requests/sec", true
				case "output_token_throughput":
					return st.OutputTokenThroughput, "tokens/sec", true
				case "request_count":
					return st.RequestCount, "requests", true
				case "error_request_count":
					return st.ErrorRequestCount, "requests", true
				}
			}
		}
	}
	return artifact.RunLevelOf(g.recs, tag)
}
