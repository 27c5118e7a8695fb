package cmdline

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// notedAllowed are the AIPerf flags surge may accept with a note and
// ignore: each changes nothing that AIPerf's run measures, for the reason
// given. A flag that changes what is measured is implemented (flags.go)
// or refused with the reason; a new noted row must be reviewed here.
var notedAllowed = map[string]string{
	"tokenizer-trust-remote-code":  "surge reads tokenizer.json and runs no code; a tokenizer that needs code does not load, and the run says so",
	"plot-required":                "surge's --auto-plot failures already fail the run",
	"export-http-trace":            "adds AIPerf's raw trace data to the JSONL; the http_req_* timings are in surge's always",
	"show-trace-timing":            "console display only",
	"server-metrics-formats":       "which files hold the server metrics, not what is scraped",
	"no-parameter-sweep-same-seed": "AIPerf's default said outright (each value seeded apart)",
	"no-sweep-table":               "console display only",
	// Refinements of refused flags: they act only with --search-space,
	// --search-recipe or --accuracy-benchmark, each refused.
	"search-stat": "only with --search-space", "search-direction": "only with --search-space",
	"search-max-iterations": "only with --search-space", "search-initial-points": "only with --search-space",
	"search-random-seed": "only with --search-space", "search-planner": "only with --search-space",
	"optuna-sampler": "only with --search-space", "optuna-acquisition": "only with --search-space",
	"optuna-terminator": "only with --search-space", "search-percentile-pooling": "only with --search-space",
	"bo-constraint-mode": "only with --search-space",
	"ttft-sla-ms":        "only with --search-recipe", "isl-osl-pairs": "only with --search-recipe",
	"itl-sla-ms": "only with --search-recipe", "tpot-sla-ms": "only with --search-recipe",
	"e2e-sla-ms": "only with --search-recipe", "error-rate-sla": "only with --search-recipe",
	"slo-attainment-fraction": "only with --search-recipe", "search-style": "only with --search-recipe",
	"degradation-threshold": "only with --search-recipe", "degradation-metric-tag": "only with --search-recipe",
	"degradation-stat": "only with --search-recipe", "isl-min": "only with --search-recipe",
	"isl-max": "only with --search-recipe", "isl-steps": "only with --search-recipe",
	"concurrency-min": "only with --search-recipe", "concurrency-max": "only with --search-recipe",
	"concurrency-steps": "only with --search-recipe", "osl-min": "only with --search-recipe",
	"osl-max": "only with --search-recipe", "osl-steps": "only with --search-recipe",
	"accuracy-tasks": "only with --accuracy-benchmark", "accuracy-n-shots": "only with --accuracy-benchmark",
	"accuracy-enable-cot": "only with --accuracy-benchmark", "accuracy-no-enable-cot": "only with --accuracy-benchmark",
	"accuracy-grader": "only with --accuracy-benchmark", "accuracy-system-prompt": "only with --accuracy-benchmark",
	"accuracy-verbose": "only with --accuracy-benchmark",
	// AIPerf's own processes and services.
	"record-processor-service-count": "AIPerf's process layout", "api-port": "AIPerf's metrics API",
	"api-host": "AIPerf's metrics API", "stats-interval": "console display only",
	"workers-max": "AIPerf's process layout", "zmq-host": "AIPerf's process layout",
	"zmq-ipc-path": "AIPerf's process layout", "zmq-dual-bind": "AIPerf's process layout",
}

// staleWords are claims a row once made that are no longer true: surge
// has these now, so no row may say it lacks them.
var staleWords = []string{"no baseten", "no weka", "no trace synthesis", "runs once", "writes no outputs.json",
	"does not ramp its warmup", "warms up closed-loop", "adds no cache-bust", "does not reset", "does not start or stop",
	"reports latencies as measured", "replays every session", "replays a trace's timestamps", "plots nothing"}

// TestForeignRowsAreTrue walks every row of AIPerf's flags surge does not
// implement and checks its word against the code: a noted row is in the
// reviewed allowlist (it changes nothing measured), the allowlist names
// only noted rows, no row is shadowed by a real option (an implemented
// flag's row is deleted), every flag a row's text points to is one surge
// takes, and no row claims surge lacks what it has.
func TestForeignRowsAreTrue(t *testing.T) {
	taken := map[string]bool{}
	for _, o := range options {
		for _, n := range o.flag.Names() {
			taken[n] = true
		}
	}
	taken["slo"] = true // surge search's (app/search), which the search rows point to
	flagRef := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	noted := map[string]bool{}
	for i := range foreignOptions {
		o := &foreignOptions[i]
		name := o.names()[0]
		for _, n := range o.names() {
			if taken[n] {
				t.Errorf("--%s: a real option takes it; delete its row", n)
			}
		}
		if o.path == "" || o.does == "" {
			t.Errorf("--%s: no input_config path or no word on what surge does", name)
		}
		if !o.refuse {
			noted[name] = true
			if notedAllowed[name] == "" {
				t.Errorf("--%s is noted (accepted and ignored) but not in the reviewed allowlist: implement it, refuse it, or review it", name)
			}
		}
		for _, ref := range flagRef.FindAllString(o.does, -1) {
			if !taken[strings.TrimPrefix(ref, "--")] {
				t.Errorf("--%s's word points to %s, which surge does not take", name, ref)
			}
		}
		for _, w := range staleWords {
			if strings.Contains(strings.ToLower(o.does), w) {
				t.Errorf("--%s says surge %q, which is no longer true", name, o.does)
			}
		}
	}
	for _, name := range slicesSorted(notedAllowed) {
		if !noted[name] {
			t.Errorf("the allowlist names --%s, which is no noted row", name)
		}
	}
}

// slicesSorted is m's keys, sorted.
func slicesSorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
