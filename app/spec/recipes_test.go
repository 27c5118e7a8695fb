package spec

import (
	"slices"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// TestRecipeBecomesASearch: AIPerf's max-concurrency-under-sla runs as a
// capacity search over concurrency, its SLA flags its filters (AIPerf's
// composition: TTFT p95, ITL p95, latency p99, error rate, then
// --search-sla), its bounds --concurrency-min and -max.
func TestRecipeBecomesASearch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		slas     []string
		min, max float64
		style    string
		probes   int
	}{
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200"}, []string{"time_to_first_token:p95:lt:200"}, 1, 1000, "monotonic", 20},
		{[]string{"--ttft-sla-ms", "200", "--search-style", "smooth_isotonic", "--tpot-sla-ms", "15", "--e2e-sla-ms", "2000", "--error-rate-sla", "0.01",
			"--search-sla", "request_latency:avg:le:900", "--concurrency-min", "2", "--concurrency-max", "64", "--search-max-iterations", "9"},
			[]string{"time_to_first_token:p95:lt:200", "inter_token_latency:p95:lt:15", "request_latency:p99:lt:2000", "request_error_rate:avg:lt:1", "request_latency:avg:le:900"}, 2, 64, "smooth_isotonic", 9},
	} {
		c, err := cmdline.ParseProfile(append(tc.args, "--streaming")...)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(c)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		sr := s.Live.Search
		if sr == nil {
			t.Fatalf("%v: not a search", tc.args)
		}
		var keys []string
		for _, f := range sr.SLAs {
			keys = append(keys, f.Key())
		}
		if !slices.Equal(keys, tc.slas) || sr.Min != tc.min || sr.Max != tc.max || sr.Start != tc.min || sr.Style != tc.style ||
			sr.Recipe != "max-concurrency-under-sla" || sr.MaxProbes != tc.probes || len(s.Load.Concs) != 1 {
			t.Errorf("%v: search %+v (SLAs %v)", tc.args, sr, keys)
		}
	}
}

// Each recipe flag or recipe surge does not run is refused with its
// reason and what to run instead.
func TestRecipeRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--ttft-sla-ms", "200"}, "read only with --search-recipe"},
		{[]string{"--search-recipe", "max-throughput-ttft-sla", "--ttft-sla-ms", "200"}, "no Bayesian optimiser"},
		{[]string{"--search-recipe", "max-goodput-under-slo", "--ttft-sla-ms", "200"}, "Bayesian optimisation of goodput"},
		{[]string{"--search-recipe", "concurrency-ramp", "--degradation-threshold", "0.2"}, "--concurrency 1,3,7,19,51,138,372,1000"},
		{[]string{"--search-recipe", "prefill-ttft-curve", "--isl-min", "256"}, "--isl 256,512"},
		{[]string{"--search-recipe", "decode-itl-curve"}, "--osl 64,128"},
		{[]string{"--search-recipe", "pareto-sweep", "--isl-osl-pairs", "128/128,512/256"}, "--sweep-mode zip"},
		{[]string{"--ttft-sla-ms", "200", "--search-style", "bo"}, "no Bayesian optimiser"},
		{[]string{"--ttft-sla-ms", "200", "--search-style", "grid"}, "eight fixed concurrencies"},
		{[]string{"--search-recipe", "max-concurrency-under-sla"}, "needs at least one of"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--itl-sla-ms", "5", "--tpot-sla-ms", "5"}, "one SLA"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--request-rate", "5"}, "drop --request-rate"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--slo-attainment-fraction", "0.9"}, "another recipe"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--search-sla-tier", "x"}, "multi-tier"},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200", "--concurrency-min", "8", "--concurrency-max", "4"}, "must be above"},
		{[]string{"--search-recipe", "nope", "--ttft-sla-ms", "200"}, "AIPerf's recipes are"},
	} {
		c, err := cmdline.ParseProfile(append(tc.args, "--streaming")...)
		if err == nil {
			_, err = Parse(c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.says)
		}
	}
	c, err := cmdline.ParseProfile("--search-recipe", "max-concurrency-under-sla", "--ttft-sla-ms", "200")
	if err == nil {
		_, err = Parse(c)
	}
	if err == nil || !strings.Contains(err.Error(), "needs --streaming") {
		t.Errorf("a TTFT recipe without --streaming: %v", err)
	}
}
