package cmdline

import (
	"net/http"

	"github.com/urfave/cli/v2"
)

// MultiRunConfig is AIPerf's adaptive stop of --num-profile-runs.
type MultiRunConfig struct {
	// ConvergenceMetric is --convergence-metric ("": every run);
	// ConvergenceStat (avg, p50, …), ConvergenceThreshold ("": the mode's
	// default) and ConvergenceMode (ci_width, cv, distribution) say when
	// it has converged.
	ConvergenceMetric, ConvergenceStat, ConvergenceThreshold, ConvergenceMode string
}

// multiRunOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func multiRunOptions() []option {
	return []option{
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "convergence-metric", Usage: "stop repeating --num-profile-runs once this metric has converged (time_to_first_token, request_latency, …)"}, path: "multi_run.convergence_metric",
			field: func(c *Config) any { return &c.ConvergenceMetric }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "convergence-stat", Usage: "the statistic judged: avg, p50, p90, p95, p99, min or max (default avg)"}, path: "multi_run.convergence_stat",
			field: func(c *Config) any { return &c.ConvergenceStat }, export: func(c *Config, _ http.Header) any { return defaulted(c.ConvergenceStat, "avg") }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "convergence-threshold", Usage: "ci_width: the interval's width over the mean (default 0.10); cv: the coefficient of variation (0.05); distribution: the KS p-value (0.05)"}, path: "multi_run.convergence_threshold",
			field: func(c *Config) any { return &c.ConvergenceThreshold }, export: func(c *Config, _ http.Header) any { return optionalNumber(c.ConvergenceThreshold) }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "convergence-mode", Usage: "ci_width, cv or distribution (default ci_width)"}, path: "multi_run.convergence_mode",
			field: func(c *Config) any { return &c.ConvergenceMode }, export: func(c *Config, _ http.Header) any { return defaulted(c.ConvergenceMode, "ci_width") }},
	}
}

// defaulted is v, or d when v is empty.
func defaulted(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
