package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// catAdaptive groups AIPerf's adaptive scale settings and its search
// recipes (one run that ramps the load while every SLA holds; the recipes
// surge runs as capacity searches). They are hidden to keep --help-all
// short, and docs/load.md lists them; --adaptive-scale itself is in the
// Load group.
const catAdaptive = "Adaptive scale and search recipes (AIPerf's; docs/load.md)"

// AdaptiveConfig is AIPerf's adaptive scale: one run that raises the
// control variable window by window while every SLA holds, then sustains
// the last passing value (--adaptive-*).
type AdaptiveConfig struct {
	// Adaptive is --adaptive-scale.
	Adaptive bool
	// AdaptiveControl is --adaptive-scale-control VAR:MIN,MAX[:TYPE];
	// AdaptiveVariable, AdaptiveMin and AdaptiveMax its expanded form
	// (--adaptive-control-variable, -min, -max; 0: not given).
	AdaptiveControl          string
	AdaptiveVariable         string
	AdaptiveMin, AdaptiveMax float64
	// AdaptivePeriod is a window's length (--adaptive-assessment-period)
	// and AdaptiveSustain how long the boundary is held
	// (--adaptive-sustain-duration); 0: not given.
	AdaptivePeriod, AdaptiveSustain time.Duration
	// AdaptiveMinCompleted is the least number of finished requests a
	// window needs (--adaptive-min-completed-requests).
	AdaptiveMinCompleted int
	// AdaptiveSLA are the SLA filters, METRIC:STAT:OP:VALUE
	// (--adaptive-scale-sla, repeatable).
	AdaptiveSLA []string
	// AdaptiveStrategy is --adaptive-scale-strategy-type (ramp_until_fail),
	// AdaptiveStepPolicy --adaptive-step-policy (sla_margin or
	// fixed_percent_step) with its --adaptive-base-step,
	// --adaptive-max-step-multiplier and --adaptive-step-percent.
	AdaptiveStrategy, AdaptiveStepPolicy string
	AdaptiveBaseStep                     int
	AdaptiveMaxMultiplier                int
	AdaptiveStepPercent                  float64
	// AdaptiveArtifactDir is where adaptive_scale_events.jsonl and
	// adaptive_scale_summary.json go ("": the export folder).
	AdaptiveArtifactDir string
}

// adaptiveOptions are the rows of the --adaptive-* flags (flags.go's
// options holds them with the rest).
func adaptiveOptions() []option {
	return []option{
		{flag: &cli.BoolFlag{Category: catLoad, Name: "adaptive-scale", Usage: "ramp the load while SLAs hold, then hold it (docs/load.md)"}, path: "loadgen.adaptive_scale.enabled",
			field: func(c *Config) any { return &c.Adaptive }},
		{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-scale-control", Usage: "what adaptive scale steers, VARIABLE:MIN,MAX[:int|float]: concurrency or request_rate (e.g. concurrency:1,64:int)"}, path: "loadgen.adaptive_scale.control.compact",
			field: func(c *Config) any { return &c.AdaptiveControl }},
		{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-control-variable", Usage: "concurrency (default) or request_rate"}, path: "loadgen.adaptive_scale.control.variable",
			field: func(c *Config) any { return &c.AdaptiveVariable }},
		{flag: &cli.Float64Flag{Category: catAdaptive, Hidden: true, Name: "adaptive-control-min", Usage: "the value the ramp starts at (default 1)"}, path: "loadgen.adaptive_scale.control.min",
			field: func(c *Config) any { return &c.AdaptiveMin }},
		{flag: &cli.Float64Flag{Category: catAdaptive, Hidden: true, Name: "adaptive-control-max", DefaultText: "--concurrency or --request-rate", Usage: "the highest value the ramp may reach"}, path: "loadgen.adaptive_scale.control.max",
			field: func(c *Config) any { return &c.AdaptiveMax }},
		{flag: &cli.Float64Flag{Category: catAdaptive, Hidden: true, Name: "adaptive-assessment-period", Aliases: []string{"adaptive-scale-assessment-period"}, Value: 30, Usage: "seconds a window runs before it is judged (at least 1); a window whose 95% intervals still straddle an SLA is extended up to three times as long"}, path: "loadgen.adaptive_scale.assessment_period",
			field: func(c *Config) any { return Secs(&c.AdaptivePeriod) }},
		{flag: &cli.Float64Flag{Category: catAdaptive, Hidden: true, Name: "adaptive-sustain-duration", Usage: "seconds to hold the boundary once found (required)"}, path: "loadgen.adaptive_scale.sustain_duration",
			field: func(c *Config) any { return Secs(&c.AdaptiveSustain) }},
		{flag: &cli.IntFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-min-completed-requests", Value: 1, Usage: "finished requests a window needs before it is judged (surge judges no window on fewer than 8)"}, path: "loadgen.adaptive_scale.min_completed_requests",
			field: func(c *Config) any { return &c.AdaptiveMinCompleted }},
		{flag: &cli.StringSliceFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-scale-sla", Usage: "an SLA every window must meet, METRIC:STAT:OP:VALUE (time_to_first_token:p95:le:200; ops lt le gt ge; repeatable; error, success and cancellation rates as fractions, 0.01 = 1%)"}, path: "loadgen.adaptive_scale.sla",
			field: func(c *Config) any { return &c.AdaptiveSLA }, many: true, whole: true},
		{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-scale-strategy-type", Value: "ramp_until_fail", Usage: "ramp_until_fail (AIPerf's only strategy)"}, path: "loadgen.adaptive_scale.strategy.type",
			field: func(c *Config) any { return &c.AdaptiveStrategy }},
		{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-step-policy", Aliases: []string{"adaptive-scale-step-policy"}, Value: "sla_margin", Usage: "how far each passing window steps up: sla_margin (base step × 1 to the multiplier, by the smallest SLA margin) or fixed_percent_step"}, path: "loadgen.adaptive_scale.strategy.step_policy",
			field: func(c *Config) any { return &c.AdaptiveStepPolicy }},
		{flag: &cli.IntFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-base-step", Aliases: []string{"adaptive-scale-base-step"}, Value: 10, Usage: "sla_margin's smallest step"}, path: "loadgen.adaptive_scale.strategy.base_step",
			field: func(c *Config) any { return &c.AdaptiveBaseStep }},
		{flag: &cli.IntFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-max-step-multiplier", Aliases: []string{"adaptive-scale-max-step-multiplier"}, Value: 4, Usage: "sla_margin's largest multiple of the base step"}, path: "loadgen.adaptive_scale.strategy.max_step_multiplier",
			field: func(c *Config) any { return &c.AdaptiveMaxMultiplier }},
		{flag: &cli.Float64Flag{Category: catAdaptive, Hidden: true, Name: "adaptive-step-percent", Aliases: []string{"adaptive-scale-step-percent"}, Value: 25, Usage: "fixed_percent_step's step, in percent of the value in force"}, path: "loadgen.adaptive_scale.strategy.step_percent",
			field: func(c *Config) any { return &c.AdaptiveStepPercent }},
		{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: "adaptive-artifact-dir", Aliases: []string{"adaptive-scale-artifact-dir"}, DefaultText: "the export folder", Usage: "folder for adaptive_scale_events.jsonl and adaptive_scale_summary.json"}, path: "loadgen.adaptive_scale.artifact_dir",
			field: func(c *Config) any { return &c.AdaptiveArtifactDir }},
	}
}
