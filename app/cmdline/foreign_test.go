package cmdline

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// acceptedAllowed are the AIPerf flags surge accepts at any value: each
// has nothing to change in surge, for the reason given (a user could not
// expect it to change the run). A flag that could is implemented
// (flags.go) or refused with its reason; a new accepted row must be
// reviewed here.
var acceptedAllowed = map[string]string{
	"tokenizer-trust-remote-code":  "surge reads tokenizer.json and runs no code; a tokenizer that needs code does not load, and the run says so",
	"plot-required":                "surge's --auto-plot failures already fail the run",
	"export-http-trace":            "the http_req_* timings are in surge's JSONL always",
	"show-trace-timing":            "console display only; the timings are exported always",
	"server-metrics-formats":       "surge writes every format always",
	"no-parameter-sweep-same-seed": "AIPerf's default said outright (each value seeded apart)",
	"no-sweep-table":               "console display only",
	"stats-interval":               "console display only",
	// AIPerf's own processes and services.
	"record-processor-service-count": "AIPerf's process layout", "workers-max": "AIPerf's process layout",
	"zmq-host": "AIPerf's process layout", "zmq-ipc-path": "AIPerf's process layout", "zmq-dual-bind": "AIPerf's process layout",
}

// staleWords are claims a row once made that are no longer true: surge
// has these now, so no row may say it lacks them.
var staleWords = []string{"no baseten", "no weka", "no trace synthesis", "runs once", "writes no outputs.json",
	"does not ramp its warmup", "warms up closed-loop", "adds no cache-bust", "does not reset", "does not start or stop",
	"reports latencies as measured", "replays every session", "replays a trace's timestamps", "plots nothing"}

// TestForeignRowsAreTrue walks every row of AIPerf's flags surge does not
// implement and checks its word against the code: an accepted row is in the
// reviewed allowlist (it changes nothing measured), the allowlist names
// only accepted rows, no row is shadowed by a real option (an implemented
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
	accepted := map[string]bool{}
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
			accepted[name] = true
			if acceptedAllowed[name] == "" {
				t.Errorf("--%s is accepted at any value but not in the reviewed allowlist: implement it, refuse it, or review it", name)
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
	for _, name := range slicesSorted(acceptedAllowed) {
		if !accepted[name] {
			t.Errorf("the allowlist names --%s, which is no accepted row", name)
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

// TestHelpAIPerfNotesNothing: --help-aiperf sorts every row into refused
// or accepted (nothing to change in surge); no row is "noted", accepted
// and ignored though a user could expect it to change the run.
func TestHelpAIPerfNotesNothing(t *testing.T) {
	var b strings.Builder
	if err := WriteAIPerfHelp(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "noted") || !strings.Contains(out, "refused") || !strings.Contains(out, "accepted") {
		t.Errorf("--help-aiperf:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		for _, implemented := range []string{"--ttft-sla-ms", "--search-recipe", "--adaptive-scale", "--concurrency-max"} {
			if strings.HasPrefix(strings.TrimSpace(line), implemented+" ") {
				t.Errorf("--help-aiperf lists %s, which surge implements", implemented)
			}
		}
	}
}
