package profile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/metrics"
)

// TestConvergenceCriteria: ci_width and cv judge a stat over the runs
// from the third run on, as AIPerf's criteria do: tight runs converge,
// scattered ones do not; a run-level metric is judged by its value.
func TestConvergenceCriteria(t *testing.T) {
	t.Parallel()
	sum := func(ttft, tput float64) *metrics.Summary {
		return &metrics.Summary{Metrics: map[metrics.Tag]metrics.Distribution{metrics.TTFT: {Avg: ttft, P95: 2 * ttft, Count: 10}},
			Run: map[metrics.Tag]float64{metrics.RequestThroughput: tput}}
	}
	for _, tc := range []struct {
		name  string
		c     spec.Convergence
		ttfts []float64
		want  []bool // after each run
	}{
		// 100, 101, 99: mean 100, std 1, t(0.975, 2) 4.30: width 8.6% < 10%.
		{"ci_width tight", spec.Convergence{Metric: metrics.TTFT, Stat: "avg", Threshold: 0.10, Mode: spec.ModeCIWidth}, []float64{100, 101, 99}, []bool{false, false, true}},
		{"ci_width scattered", spec.Convergence{Metric: metrics.TTFT, Stat: "avg", Threshold: 0.10, Mode: spec.ModeCIWidth}, []float64{100, 150, 60, 130}, []bool{false, false, false, false}},
		{"cv", spec.Convergence{Metric: metrics.TTFT, Stat: "p95", Threshold: 0.05, Mode: spec.ModeCV}, []float64{100, 110, 105, 104}, []bool{false, false, true, true}},
		{"cv tighter threshold", spec.Convergence{Metric: metrics.TTFT, Stat: "p95", Threshold: 0.01, Mode: spec.ModeCV}, []float64{100, 110, 105}, []bool{false, false, false}},
		{"run-level", spec.Convergence{Metric: metrics.RequestThroughput, Stat: "avg", Threshold: 0.05, Mode: spec.ModeCV}, []float64{1, 1, 1}, []bool{false, false, true}},
	} {
		cv := &convergence{c: &tc.c, level: 0.95}
		for i, x := range tc.ttfts {
			cv.add(sum(x, 10+float64(i%2)*0.1), "")
			got, how, err := cv.converged()
			if err != nil || got != tc.want[i] {
				t.Errorf("%s after %d runs: %v (%s, %v), want %v", tc.name, i+1, got, how, err, tc.want[i])
			}
		}
	}
}

// TestConvergenceEndToEnd: on the mock, a loose threshold stops
// --num-profile-runs 5 after the third run (AIPerf's least), a threshold
// no run meets runs all five; the distribution mode compares the runs'
// per-request records.
func TestConvergenceEndToEnd(t *testing.T) {
	t.Parallel()
	runs := func(args ...string) (int, string) {
		dir := t.TempDir()
		c := parseArgs(t, append([]string{"--model", "mock", "--streaming", "--ui", "none", "--tokenizer", "builtin", "--request-count", "6",
			"--isl", "8", "--osl", "2", "--num-profile-runs", "5", "--output-artifact-dir", dir, "--no-gpu-telemetry", "--no-server-metrics"}, args...)...)
		var out strings.Builder
		if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(filepath.Join(dir, FolderProfileRuns))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries), out.String()
	}
	if n, out := runs("--convergence-metric", "request_latency", "--convergence-mode", "cv", "--convergence-threshold", "0.99"); n != 3 || !strings.Contains(out, "converged after 3 of at most 5 runs") {
		t.Errorf("loose cv threshold: %d runs\n%s", n, out)
	}
	if n, _ := runs("--convergence-metric", "request_latency", "--convergence-stat", "p99", "--convergence-threshold", "0.0000001"); n != 5 {
		t.Errorf("a width no run meets: %d runs, want 5", n)
	}
	if n, out := runs("--convergence-metric", "output_sequence_length", "--convergence-mode", "distribution", "--convergence-threshold", "0.001"); n != 3 {
		t.Errorf("distribution of identical output lengths: %d runs\n%s", n, out)
	}
}

// TestConvergenceFlagsRefused: each refusal names its flag.
func TestConvergenceFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--convergence-metric", "time_to_first_token"}, "give --num-profile-runs 2 to 10"},
		{[]string{"--convergence-mode", "cv"}, "--convergence-mode shapes --convergence-metric's stop"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "ttft"}, "not a metric tag"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-stat", "p42"}, "--convergence-stat \"p42\""},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-mode", "ks"}, "want ci_width, cv or distribution"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-threshold", "1.5"}, "between 0 and 1"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-mode", "distribution", "--export-level", "summary"}, "not with --export-level summary"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_throughput", "--convergence-stat", "p99"}, "one value a run"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--concurrency", "1,2"}, "not with a sweep"},
	} {
		_, err := spec.Parse(parseArgs(t, tc.args...))
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
