package cmdline

import (
	"github.com/urfave/cli/v2"
)

// RecipeConfig is AIPerf's search recipes (--search-recipe and the flags
// that feed one): surge runs those it can map as a capacity search.
type RecipeConfig struct {
	// SearchRecipe is --search-recipe ("": none); SearchStyle is
	// --search-style (max-concurrency-under-sla's planner).
	SearchRecipe, SearchStyle string
	// The SLA sugar, as given ("": not given): --ttft-sla-ms,
	// --itl-sla-ms, --tpot-sla-ms, --e2e-sla-ms (ms) and
	// --error-rate-sla (a fraction).
	TTFTSLA, ITLSLA, TPOTSLA, E2ESLA, ErrorRateSLA string
	// SearchSLA are --search-sla's filters, METRIC:STAT:OP:VALUE;
	// SearchSLATier --search-sla-tier's.
	SearchSLA, SearchSLATier []string
	// SLOAttainment is --slo-attainment-fraction (max-goodput-under-slo's).
	SLOAttainment string
	// ConcurrencyMin, -Max and -Steps bound a concurrency recipe
	// (--concurrency-min, --concurrency-max, --concurrency-steps; "": the
	// recipe's own).
	ConcurrencyMin, ConcurrencyMax, ConcurrencySteps string
	// The curve recipes' bounds and the knee's threshold, as given:
	// --isl-min/-max/-steps, --osl-min/-max/-steps,
	// --degradation-threshold, -metric-tag, -stat and --isl-osl-pairs.
	ISLMin, ISLMax, ISLSteps, OSLMin, OSLMax, OSLSteps    string
	DegradationThreshold, DegradationTag, DegradationStat string
	ISLOSLPairs                                           string
	// SearchMaxIterations bounds a recipe's probes
	// (--search-max-iterations; 0: the recipe's own).
	SearchMaxIterations int
}

// recipeOptions are the rows of those flags (flags.go's options holds
// them with the rest).
func recipeOptions() []option {
	str := func(name, path, usage string, field func(c *Config) *string) option {
		return option{flag: &cli.StringFlag{Category: catAdaptive, Hidden: true, Name: name, Usage: usage}, path: path,
			field: func(c *Config) any { return field(c) }}
	}
	return []option{
		str("search-recipe", "search.recipe", "AIPerf's search recipe: max-concurrency-under-sla runs as a capacity search (surge search's); the Bayesian and grid recipes are refused with the surge command that answers their question",
			func(c *Config) *string { return &c.SearchRecipe }),
		str("search-style", "search.style", "max-concurrency-under-sla's planner: monotonic (default) or smooth_isotonic, both searched by bracketing and bisection, each probe judged by its 95% intervals",
			func(c *Config) *string { return &c.SearchStyle }),
		str("ttft-sla-ms", "search.ttft_sla_ms", "recipe SLA: p95 TTFT under this many ms", func(c *Config) *string { return &c.TTFTSLA }),
		str("itl-sla-ms", "search.itl_sla_ms", "recipe SLA: p95 inter-token latency under this many ms", func(c *Config) *string { return &c.ITLSLA }),
		str("tpot-sla-ms", "search.tpot_sla_ms", "recipe SLA: --itl-sla-ms's other name", func(c *Config) *string { return &c.TPOTSLA }),
		str("e2e-sla-ms", "search.e2e_sla_ms", "recipe SLA: p99 request latency under this many ms", func(c *Config) *string { return &c.E2ESLA }),
		str("error-rate-sla", "search.error_rate_sla", "recipe SLA: error rate under this fraction", func(c *Config) *string { return &c.ErrorRateSLA }),
		{flag: &cli.StringSliceFlag{Category: catAdaptive, Hidden: true, Name: "search-sla", Usage: "a recipe SLA, METRIC:STAT:OP:VALUE (repeatable)"}, path: "search.sla",
			field: func(c *Config) any { return &c.SearchSLA }, many: true, whole: true},
		{flag: &cli.StringSliceFlag{Category: catAdaptive, Hidden: true, Name: "search-sla-tier", Usage: "AIPerf's multi-tier SLA planner (refused: one set of SLAs per search)"}, path: "search.sla_tiers",
			field: func(c *Config) any { return &c.SearchSLATier }, many: true, whole: true},
		str("slo-attainment-fraction", "search.slo_attainment_fraction", "max-goodput-under-slo's attainment (refused with that recipe)", func(c *Config) *string { return &c.SLOAttainment }),
		str("concurrency-min", "search.concurrency_min", "the lowest concurrency a recipe searches (default 1)", func(c *Config) *string { return &c.ConcurrencyMin }),
		str("concurrency-max", "search.concurrency_max", "the highest concurrency a recipe searches (default 1000)", func(c *Config) *string { return &c.ConcurrencyMax }),
		str("concurrency-steps", "search.concurrency_steps", "a grid recipe's concurrency points", func(c *Config) *string { return &c.ConcurrencySteps }),
		str("isl-min", "search.isl_min", "prefill-ttft-curve's shortest prompt", func(c *Config) *string { return &c.ISLMin }),
		str("isl-max", "search.isl_max", "prefill-ttft-curve's longest prompt", func(c *Config) *string { return &c.ISLMax }),
		str("isl-steps", "search.isl_steps", "prefill-ttft-curve's prompt lengths", func(c *Config) *string { return &c.ISLSteps }),
		str("osl-min", "search.osl_min", "decode-itl-curve's shortest output", func(c *Config) *string { return &c.OSLMin }),
		str("osl-max", "search.osl_max", "decode-itl-curve's longest output", func(c *Config) *string { return &c.OSLMax }),
		str("osl-steps", "search.osl_steps", "decode-itl-curve's output lengths", func(c *Config) *string { return &c.OSLSteps }),
		str("degradation-threshold", "search.degradation_threshold", "concurrency-ramp's knee: p99 latency this fraction over the first point's", func(c *Config) *string { return &c.DegradationThreshold }),
		str("degradation-metric-tag", "search.degradation_metric_tag", "concurrency-ramp's knee metric", func(c *Config) *string { return &c.DegradationTag }),
		str("degradation-stat", "search.degradation_stat", "concurrency-ramp's knee statistic", func(c *Config) *string { return &c.DegradationStat }),
		str("isl-osl-pairs", "search.isl_osl_pairs", "pareto-sweep's ISL/OSL pairs", func(c *Config) *string { return &c.ISLOSLPairs }),
		{flag: &cli.IntFlag{Category: catAdaptive, Hidden: true, Name: "search-max-iterations", Usage: "the most probes a recipe's search makes (default 20)"}, path: "search.max_iterations",
			field: func(c *Config) any { return &c.SearchMaxIterations }},
	}
}
