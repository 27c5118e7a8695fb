package spec

import (
	"slices"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics"
)

// Convergence stops repeating --num-profile-runs once Metric has
// converged, as AIPerf's adaptive multi-run does (from MinRuns runs on):
// ci_width when the Student-t interval of Stat over the runs is narrower
// than Threshold × its mean; cv when their coefficient of variation is
// below Threshold; distribution when the latest run's per-request values
// match the earlier runs' (two-sample KS p-value above Threshold).
type Convergence struct {
	Metric    metrics.Tag
	Stat      string
	Threshold float64
	Mode      string
}

// Convergence modes and AIPerf's least runs before one can stop.
const (
	ModeCIWidth      = "ci_width"
	ModeCV           = "cv"
	ModeDistribution = "distribution"
	MinRuns          = 3
)

// convergenceStats are the statistics --convergence-stat takes.
var convergenceStats = []string{"avg", "p50", "p90", "p95", "p99", "min", "max"}

// defaultThresholds are AIPerf's per mode.
var defaultThresholds = map[string]float64{ModeCIWidth: 0.10, ModeCV: 0.05, ModeDistribution: 0.05}

// parseConvergence reads --convergence-*: a known metric, stat and mode,
// a threshold in (0, 1), repeats to stop early, and the per-request
// records the distribution mode compares.
func parseConvergence(c *cmdline.Config) (*Convergence, error) {
	if c.ConvergenceMetric == "" {
		for _, f := range []struct{ flag, v string }{{"--convergence-stat", c.ConvergenceStat},
			{"--convergence-threshold", c.ConvergenceThreshold}, {"--convergence-mode", c.ConvergenceMode}} {
			if f.v != "" {
				return nil, cmdline.Usagef("%s shapes --convergence-metric's stop: give the metric", f.flag)
			}
		}
		return nil, nil
	}
	cv := &Convergence{Metric: metrics.Tag(strings.TrimSpace(c.ConvergenceMetric)), Stat: strings.ToLower(orDefault(strings.TrimSpace(c.ConvergenceStat), "avg")),
		Mode: strings.ToLower(orDefault(strings.TrimSpace(c.ConvergenceMode), ModeCIWidth))}
	known := func(defs []metrics.Def) bool {
		return slices.ContainsFunc(defs, func(d metrics.Def) bool { return d.Tag == cv.Metric })
	}
	th, ok := defaultThresholds[cv.Mode]
	switch {
	case c.NumProfileRuns < 2:
		return nil, cmdline.Usagef("--convergence-metric stops repeating --num-profile-runs early: give --num-profile-runs 2 to 10")
	case !known(metrics.RequestDefs) && !known(metrics.RunDefs):
		return nil, cmdline.Usagef("--convergence-metric %q: not a metric tag (time_to_first_token, request_latency, inter_token_latency, …)", c.ConvergenceMetric)
	case !slices.Contains(convergenceStats, cv.Stat):
		return nil, cmdline.Usagef("--convergence-stat %q: want %s", c.ConvergenceStat, strings.Join(convergenceStats, ", "))
	case !ok:
		return nil, cmdline.Usagef("--convergence-mode %q: want ci_width, cv or distribution", c.ConvergenceMode)
	case cv.Mode == ModeDistribution && strings.EqualFold(strings.TrimSpace(c.ExportLevel), LevelSummary):
		return nil, cmdline.Usagef("--convergence-mode distribution compares the runs' per-request records: not with --export-level summary")
	case cv.Mode == ModeDistribution && !known(metrics.RequestDefs):
		return nil, cmdline.Usagef("--convergence-mode distribution compares per-request values: %s is a run-level metric", cv.Metric)
	case known(metrics.RunDefs) && !known(metrics.RequestDefs) && cv.Stat != "avg":
		return nil, cmdline.Usagef("--convergence-stat %s: %s is one value a run (give avg)", cv.Stat, cv.Metric)
	}
	cv.Threshold = th
	if c.ConvergenceThreshold != "" {
		t, err := positive("--convergence-threshold", c.ConvergenceThreshold)
		if err != nil || t >= 1 {
			return nil, cmdline.Usagef("--convergence-threshold %q: want a number between 0 and 1", c.ConvergenceThreshold)
		}
		cv.Threshold = t
	}
	return cv, nil
}

// checkConvergenceSweep refuses --convergence-metric over a sweep: it
// judges the runs of one load, and a sweep's runs pool several.
func checkConvergenceSweep(s *Spec, _ *cmdline.Config) error {
	l := &s.Load
	if l.Repeats.Converge != nil && (len(l.Concs) > 1 || len(l.Rates) > 1 || l.Sweep != nil) {
		return cmdline.Usagef("--convergence-metric judges repeated runs of one load: not with a sweep")
	}
	return nil
}
