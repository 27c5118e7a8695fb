package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

// AIPerf's search recipes, and why surge refuses those it does not map
// onto its capacity search: a Bayesian optimiser it does not have, or a
// grid characterisation that is one of surge's sweeps.
const (
	recipeMaxConcurrency = "max-concurrency-under-sla"
	noBayes              = "is Bayesian optimisation (maximise a throughput within the SLAs), and surge has no Bayesian optimiser: --search-recipe max-concurrency-under-sla finds the highest concurrency within the same SLAs by bisection"
)

// refusedRecipes are AIPerf's recipes surge does not run, each with what
// to run instead.
var refusedRecipes = map[string]string{
	"max-throughput-ttft-sla": noBayes,
	"max-throughput-itl-sla":  noBayes,
	"max-goodput-under-slo":   "is Bayesian optimisation of goodput, and surge has no Bayesian optimiser: surge search --slo with the per-request limits finds the highest load within them, and --goodput reports goodput at any load",
	"concurrency-ramp":        "is a grid of eight concurrencies with a knee read off it: surge profile --concurrency 1,3,7,19,51,138,372,1000 runs that grid and marks its knee (--knee-factor)",
	"prefill-ttft-curve":      "is a grid of prompt lengths with a curve fitted: surge profile --isl 256,512,1024,2048,4096,8192,16384,32768 --concurrency 1 runs that grid (its stage table has TTFT per length)",
	"decode-itl-curve":        "is a grid of concurrencies and output lengths: surge profile --concurrency 1,3,8,23,69,200 --osl 64,128,256,512,1024 runs that grid (its stage table has ITL per cell)",
	"pareto-sweep":            "pairs ISL/OSL shapes with a concurrency list: surge profile --isl A,B --osl X,Y --sweep-mode zip runs the shapes, once per --concurrency value",
}

// Recipe search styles surge runs: each finds the highest concurrency
// whose probes meet every SLA; surge's bracketing and bisection answer it,
// each probe judged by its intervals.
var recipeStyles = map[string]bool{"": true, "monotonic": true, "smooth_isotonic": true}

// parseRecipe reads AIPerf's search recipe flags: a recipe surge maps
// becomes a capacity search over concurrency (c.Search), one it does not
// is refused with what answers its question, and a recipe flag given
// without a recipe is refused (AIPerf reads them only with one).
func parseRecipe(_ *Spec, c *cmdline.Config) error {
	r := &c.RecipeConfig
	if r.SearchRecipe == "" && r.SearchStyle != "" {
		// --search-style belongs to max-concurrency-under-sla alone.
		r.SearchRecipe = recipeMaxConcurrency
	}
	if r.SearchRecipe == "" {
		if flag := recipeFlagGiven(r); flag != "" {
			return cmdline.Usagef("%s is read only with --search-recipe, as AIPerf reads it: add --search-recipe max-concurrency-under-sla to search for the highest concurrency within it", flag)
		}
		return nil
	}
	if why, ok := refusedRecipes[r.SearchRecipe]; ok {
		return cmdline.Usagef("--search-recipe %s %s", r.SearchRecipe, why)
	}
	if r.SearchRecipe != recipeMaxConcurrency {
		return cmdline.Usagef("--search-recipe %q: AIPerf's recipes are max-concurrency-under-sla, max-throughput-ttft-sla, max-throughput-itl-sla, max-goodput-under-slo, concurrency-ramp, prefill-ttft-curve, decode-itl-curve and pareto-sweep", r.SearchRecipe)
	}
	switch {
	case r.SearchStyle == "bo" || r.SearchStyle == "optuna":
		return cmdline.Usagef("--search-style %s maximises a throughput within the SLAs by Bayesian optimisation, and surge has no Bayesian optimiser: --search-style monotonic finds the highest concurrency within them", r.SearchStyle)
	case r.SearchStyle == "grid":
		return cmdline.Usagef("--search-style grid runs eight fixed concurrencies, not a search: surge profile --concurrency 1,3,7,19,51,138,372,1000 runs that grid, or --search-style monotonic searches")
	case !recipeStyles[r.SearchStyle]:
		return cmdline.Usagef("--search-style %q: want monotonic, smooth_isotonic, bo, optuna or grid", r.SearchStyle)
	case c.Search != nil:
		return cmdline.Usagef("--search-recipe makes surge profile a search: run it with surge profile, not surge search")
	case len(r.SearchSLATier) > 0:
		return cmdline.Usagef("--search-sla-tier is AIPerf's multi-tier planner: surge searches one set of SLAs; give them as --search-sla")
	case strings.TrimSpace(c.RequestRate) != "":
		return cmdline.Usagef("--search-recipe %s searches concurrency: drop --request-rate", recipeMaxConcurrency)
	}
	for _, f := range []struct{ flag, v string }{{"--slo-attainment-fraction", r.SLOAttainment}, {"--degradation-threshold", r.DegradationThreshold},
		{"--degradation-metric-tag", r.DegradationTag}, {"--degradation-stat", r.DegradationStat}, {"--isl-min", r.ISLMin}, {"--isl-max", r.ISLMax},
		{"--isl-steps", r.ISLSteps}, {"--osl-min", r.OSLMin}, {"--osl-max", r.OSLMax}, {"--osl-steps", r.OSLSteps}, {"--isl-osl-pairs", r.ISLOSLPairs},
		{"--concurrency-steps", r.ConcurrencySteps}} {
		if f.v != "" {
			return cmdline.Usagef("%s belongs to another recipe than %s: drop it", f.flag, recipeMaxConcurrency)
		}
	}
	slas, err := recipeSLAs(r)
	if err != nil {
		return err
	}
	if len(slas) == 0 {
		return cmdline.Usagef("--search-recipe %s needs at least one of --ttft-sla-ms, --tpot-sla-ms, --itl-sla-ms, --e2e-sla-ms, --error-rate-sla or --search-sla", recipeMaxConcurrency)
	}
	lo, hi := 1.0, 1000.0
	for _, b := range []struct {
		flag, v string
		to      *float64
	}{{"--concurrency-min", r.ConcurrencyMin, &lo}, {"--concurrency-max", r.ConcurrencyMax, &hi}} {
		if b.v == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(b.v))
		if err != nil || n < 1 {
			return cmdline.Usagef("%s %q: want a whole number ≥ 1", b.flag, b.v)
		}
		*b.to = float64(n)
	}
	if hi <= lo {
		return cmdline.Usagef("--concurrency-max %g must be above --concurrency-min %g", hi, lo)
	}
	if strings.Contains(c.Concurrency, ",") {
		return cmdline.Usagef("--search-recipe %s searches one concurrency at a time: give --concurrency-min and --concurrency-max, not a list", recipeMaxConcurrency)
	}
	// AIPerf's monotonic planner: up to 20 probes, 5% precision, from the
	// lower bound up.
	c.Search = &cmdline.SearchConfig{SLA: slas, Recipe: recipeMaxConcurrency, Style: r.SearchStyle, Min: lo, Max: hi, Resolution: 0.05,
		MaxProbes: 20, Settle: true, MinProbe: 5 * time.Second}
	if r.SearchMaxIterations > 0 {
		c.Search.MaxProbes = r.SearchMaxIterations
	}
	if c.Search.Style == "" {
		c.Search.Style = "monotonic"
	}
	c.Concurrency = strconv.FormatFloat(lo, 'f', -1, 64)
	if c.RequestCount == 0 {
		c.RequestCount = 2000 // distinct prompts to cycle through, not a bound
	}
	return nil
}

// recipeSLAs are the recipe's SLA filters as AIPerf composes them: the
// sugar flags first (TTFT p95, ITL p95, latency p99, error rate), then
// --search-sla in order.
func recipeSLAs(r *cmdline.RecipeConfig) ([]string, error) {
	if r.ITLSLA != "" && r.TPOTSLA != "" {
		return nil, cmdline.Usagef("--itl-sla-ms and --tpot-sla-ms are one SLA: give one")
	}
	var out []string
	for _, s := range []struct{ flag, v, form string }{
		{"--ttft-sla-ms", r.TTFTSLA, "time_to_first_token:p95:lt:%s"},
		{"--itl-sla-ms", r.ITLSLA, "inter_token_latency:p95:lt:%s"},
		{"--tpot-sla-ms", r.TPOTSLA, "inter_token_latency:p95:lt:%s"},
		{"--e2e-sla-ms", r.E2ESLA, "request_latency:p99:lt:%s"},
	} {
		if s.v == "" {
			continue
		}
		if v, err := strconv.ParseFloat(s.v, 64); err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, cmdline.Usagef("%s %q: want milliseconds > 0", s.flag, s.v)
		}
		out = append(out, fmt.Sprintf(s.form, s.v))
	}
	if r.ErrorRateSLA != "" {
		v, err := strconv.ParseFloat(r.ErrorRateSLA, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, cmdline.Usagef("--error-rate-sla %q: want a fraction between 0 and 1", r.ErrorRateSLA)
		}
		// AIPerf's filter is in percent (request_error_rate), the flag a
		// fraction.
		out = append(out, "request_error_rate:avg:lt:"+strconv.FormatFloat(100*v, 'g', -1, 64))
	}
	return append(out, r.SearchSLA...), nil
}

// recipeFlagGiven names a recipe flag given ("" for none).
func recipeFlagGiven(r *cmdline.RecipeConfig) string {
	for _, f := range []struct{ flag, v string }{{"--ttft-sla-ms", r.TTFTSLA}, {"--itl-sla-ms", r.ITLSLA}, {"--tpot-sla-ms", r.TPOTSLA},
		{"--e2e-sla-ms", r.E2ESLA}, {"--error-rate-sla", r.ErrorRateSLA}, {"--slo-attainment-fraction", r.SLOAttainment},
		{"--concurrency-min", r.ConcurrencyMin}, {"--concurrency-max", r.ConcurrencyMax}, {"--concurrency-steps", r.ConcurrencySteps},
		{"--isl-min", r.ISLMin}, {"--isl-max", r.ISLMax}, {"--isl-steps", r.ISLSteps}, {"--osl-min", r.OSLMin}, {"--osl-max", r.OSLMax},
		{"--osl-steps", r.OSLSteps}, {"--degradation-threshold", r.DegradationThreshold}, {"--degradation-metric-tag", r.DegradationTag},
		{"--degradation-stat", r.DegradationStat}, {"--isl-osl-pairs", r.ISLOSLPairs}} {
		if f.v != "" {
			return f.flag
		}
	}
	switch {
	case len(r.SearchSLA) > 0:
		return "--search-sla"
	case len(r.SearchSLATier) > 0:
		return "--search-sla-tier"
	case r.SearchMaxIterations > 0:
		return "--search-max-iterations"
	}
	return ""
}
