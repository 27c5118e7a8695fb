package cmdline

import (
	"net/http"
	"time"

	"github.com/urfave/cli/v2"
)

// MultiRunConfig is AIPerf's adaptive stop of --num-profile-runs.
type MultiRunConfig struct {
	// ConvergenceMetric is --convergence-metric ("": every run);
	// ConvergenceStat (avg, p50, …), ConvergenceThreshold ("": the mode's
	// default) and ConvergenceMode (ci_width, cv, distribution) say when
	// it has converged.
	ConvergenceMetric, ConvergenceStat, ConvergenceThreshold, ConvergenceMode string

	// WarmupFirstOnly and WarmupEveryRun are
	// --profile-run-disable-warmup-after-first (the default, said
	// outright) and its --no- form (warm up before every run).
	WarmupFirstOnly, WarmupEveryRun bool
	// ConsistentSeed and NoConsistentSeed are --set-consistent-seed (the
	// default: every run seeded 42 without --random-seed) and its --no-
	// form (each run draws its own seed).
	ConsistentSeed, NoConsistentSeed bool
	// VarySeed and NoVarySeed are --vary-seed-per-trial (each run a seed
	// derived from the run's and its number) and its --no- form (the
	// default).
	VarySeed, NoVarySeed bool
	// SweepCooldown waits between a sweep's stages
	// (--parameter-sweep-cooldown-seconds); SweepOrder is
	// --parameter-sweep-mode ("": repeated).
	SweepCooldown time.Duration
	SweepOrder    string
}

// multiRunOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func multiRunOptions() []option {
	pair := func(name, path, usage string, field func(c *Config) *bool) option {
		return option{flag: &cli.BoolFlag{Category: catLoad, Hidden: true, Name: name, Usage: usage}, path: path, field: func(c *Config) any { return field(c) }}
	}
	return []option{
		pair("profile-run-disable-warmup-after-first", "multi_run.profile_run_disable_warmup_after_first", "warm up before the first of --num-profile-runs only (the default)", func(c *Config) *bool { return &c.WarmupFirstOnly }),
		pair("no-profile-run-disable-warmup-after-first", "multi_run.no_profile_run_disable_warmup_after_first", "warm up before every one of --num-profile-runs", func(c *Config) *bool { return &c.WarmupEveryRun }),
		pair("set-consistent-seed", "multi_run.set_consistent_seed", "seed every one of --num-profile-runs alike: --random-seed, else 42 (the default)", func(c *Config) *bool { return &c.ConsistentSeed }),
		pair("no-set-consistent-seed", "multi_run.no_set_consistent_seed", "without --random-seed, let each of --num-profile-runs draw its own seed", func(c *Config) *bool { return &c.NoConsistentSeed }),
		pair("vary-seed-per-trial", "multi_run.vary_seed_per_trial", "seed each of --num-profile-runs apart: a SHA-256 of the seed and the run's number", func(c *Config) *bool { return &c.VarySeed }),
		pair("no-vary-seed-per-trial", "multi_run.no_vary_seed_per_trial", "every one of --num-profile-runs the same seed (the default)", func(c *Config) *bool { return &c.NoVarySeed }),
		{flag: &cli.Float64Flag{Category: catLoad, Hidden: true, Name: "parameter-sweep-cooldown-seconds", Usage: "seconds to wait between a sweep's stages (after one drains, before the next starts)"}, path: "sweep.cooldown_seconds",
			field: func(c *Config) any { return Secs(&c.SweepCooldown) }},
		{flag: &cli.StringFlag{Category: catLoad, Hidden: true, Name: "parameter-sweep-mode", Usage: "repeated (the default: each of --num-profile-runs runs the whole sweep); independent is refused"}, path: "sweep.mode",
			field: func(c *Config) any { return &c.SweepOrder }, export: func(c *Config, _ http.Header) any { return defaulted(c.SweepOrder, "repeated") }},
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
