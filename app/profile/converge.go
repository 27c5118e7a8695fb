package profile

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics"
	"github.com/surgebench/surge/metrics/artifact"
	mstats "github.com/surgebench/surge/metrics/stats"
)

// convergence judges repeated runs as AIPerf's adaptive multi-run does:
// after each run, whether the metric has converged over the runs so far.
type convergence struct {
	c     *spec.Convergence
	level float64 // the intervals' confidence level (ci_width)
	jsonl string  // the runs' per-request file (distribution)
	runs  []convergenceRun
}

// convergenceRun is one finished run: its summary and folder.
type convergenceRun struct {
	summary *metrics.Summary
	dir     string
}

// add records a finished run.
func (cv *convergence) add(s *metrics.Summary, dir string) {
	cv.runs = append(cv.runs, convergenceRun{s, dir})
}

// converged reports whether the runs so far meet the criterion, and how
// close they are, for the log.
func (cv *convergence) converged() (bool, string, error) {
	c := cv.c
	if c.Mode == spec.ModeDistribution {
		return cv.distribution()
	}
	var xs []float64
	for _, r := range cv.runs {
		if x, ok := statOf(r.summary, c.Metric, c.Stat); ok {
			xs = append(xs, x)
		}
	}
	if len(xs) < spec.MinRuns {
		return false, fmt.Sprintf("%d runs with %s, %d needed", len(xs), c.Metric, spec.MinRuns), nil
	}
	sp := mstats.Describe(xs, cv.level)
	if sp.Mean == 0 {
		return false, "its mean is 0", nil
	}
	ratio := sp.CV
	what := "coefficient of variation"
	if c.Mode == spec.ModeCIWidth {
		ratio, what = (sp.Hi-sp.Lo)/math.Abs(sp.Mean), fmt.Sprintf("%g%% interval width / mean", 100*cv.level)
	}
	return ratio < c.Threshold, fmt.Sprintf("%s %s over %d runs: %.4g (threshold %g)", c.Stat, what, len(xs), ratio, c.Threshold), nil
}

// distribution compares the latest run's per-request values of the
// metric with the earlier runs' (two-sample KS).
func (cv *convergence) distribution() (bool, string, error) {
	if len(cv.runs) < spec.MinRuns {
		return false, fmt.Sprintf("%d runs, %d needed", len(cv.runs), spec.MinRuns), nil
	}
	var before, last []float64
	for i, r := range cv.runs {
		xs, err := requestValues(filepath.Join(r.dir, cv.jsonl), string(cv.c.Metric))
		if err != nil {
			return false, "", err
		}
		if i == len(cv.runs)-1 {
			last = xs
		} else {
			before = append(before, xs...)
		}
	}
	if len(before) < 2 || len(last) < 2 {
		return false, fmt.Sprintf("too few %s values to compare", cv.c.Metric), nil
	}
	ks := mstats.KolmogorovSmirnov(before, last)
	return ks.P > cv.c.Threshold, fmt.Sprintf("KS p-value of the last run against the others: %.4g (threshold %g)", ks.P, cv.c.Threshold), nil
}

// statOf is a summary's value of tag's stat: a per-request metric's
// statistic, or a run-level metric's value (its avg).
func statOf(s *metrics.Summary, tag metrics.Tag, stat string) (float64, bool) {
	if s == nil {
		return 0, false
	}
	if d, ok := s.Metrics[tag]; ok && d.Count > 0 {
		x := map[string]float64{"avg": d.Avg, "p50": d.P50, "p90": d.P90, "p95": d.P95, "p99": d.P99, "min": d.Min, "max": d.Max}[stat]
		return x, !math.IsNaN(x)
	}
	if x, ok := s.Run[tag]; ok && stat == "avg" && !math.IsNaN(x) {
		return x, true
	}
	return 0, false
}

// requestValues reads a metric's per-request values from a run's records
// (the profile's successful requests).
func requestValues(path, tag string) ([]float64, error) {
	f, err := artifact.OpenExport(path)
	if err != nil {
		return nil, fmt.Errorf("--convergence-mode distribution: %w", err)
	}
	defer f.Close()
	recs, err := artifact.ReadRecords(f)
	if err != nil {
		return nil, fmt.Errorf("--convergence-mode distribution: %s: %w", path, err)
	}
	var xs []float64
	for _, r := range recs {
		if x, ok := r.Metrics[tag]; ok && !r.Failed() && r.Phase != "warmup" {
			xs = append(xs, x)
		}
	}
	return xs, nil
}
