package profile

import (
	"errors"
	"github.com/surgebench/surge/app/spec"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics/export"
)

// TestRepeatedRunsEndToEnd: --num-profile-runs 3 against the embedded
// mock writes each run's exports in profile_runs/run_NNNN, the warmup in
// the first only and every run seeded alike (42 without --random-seed),
// and aggregate/ with each metric's mean, std and interval over the runs
// at --confidence-level; the console shows the intervals.
func TestRepeatedRunsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	c := parseArgs(t, "--ui", "none", "--streaming", "--no-gpu-telemetry", "--no-server-metrics", "--output-artifact-dir", dir,
		"--num-profile-runs", "3", "--confidence-level", "0.9", "--profile-run-cooldown-seconds", "0.05",
		"--request-count", "3", "--warmup-request-count", "1", "--isl", "16", "--osl", "3", "--report")
	var out strings.Builder
	res, err := runConfig(t.Context(), c, &out, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Dir != dir {
		t.Errorf("result folder %s, want %s", res.Dir, dir)
	}
	var ttft []float64
	for i, run := range []string{"run_0001", "run_0002", "run_0003"} {
		m := apptest.ReadExport(t, filepath.Join(dir, FolderProfileRuns, run))
		if n := apptest.RunAvg(t, m, "request_count"); n != 3 {
			t.Errorf("%s: %g requests, want 3", run, n)
		}
		_, warm := m["warmup_metrics"]
		if warm != (i == 0) {
			t.Errorf("%s: warmup_metrics present %v, want it in the first run only", run, warm)
		}
		if seed := m["input_config"].(map[string]any)["input"].(map[string]any)["random_seed"]; seed != 42.0 {
			t.Errorf("%s: seed %v, want 42", run, seed)
		}
		ttft = append(ttft, apptest.RunAvg(t, m, "time_to_first_token"))
	}
	agg := readJSON(t, filepath.Join(dir, FolderAggregate, export.AggregateJSONFile))
	meta := agg["metadata"].(map[string]any)
	if meta["aggregation_type"] != "confidence" || meta["num_profile_runs"] != 3.0 || meta["num_successful_runs"] != 3.0 || meta["confidence_level"] != 0.9 {
		t.Errorf("metadata %v", meta)
	}
	st := agg["metrics"].(map[string]any)["time_to_first_token_avg"].(map[string]any)
	mean := (ttft[0] + ttft[1] + ttft[2]) / 3
	if got := st["mean"].(float64); math.Abs(got-mean) > 1e-3*mean {
		t.Errorf("TTFT mean %g, want the runs' %g", got, mean)
	}
	// t(0.95, 2) = 2.919986: the 90% interval of three runs.
	if tc := st["t_critical"].(float64); math.Abs(tc-2.919986) > 1e-4 {
		t.Errorf("t_critical %g, want 2.919986", tc)
	}
	if lo, hi := st["ci_low"].(float64), st["ci_high"].(float64); lo > st["mean"].(float64) || hi < st["mean"].(float64) {
		t.Errorf("interval [%g, %g] does not hold the mean", lo, hi)
	}
	if _, err := os.Stat(filepath.Join(dir, FolderAggregate, export.AggregateCSVFile)); err != nil {
		t.Error(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "runs: TTFT p99 (mean and 90% CI)") {
		t.Errorf("report.html does not draw the runs' spread (%v)", err)
	}
	if s := out.String(); !strings.Contains(s, "TTFT avg") || !strings.Contains(s, "mean ± half the 90% CI") {
		t.Errorf("console shows no intervals:\n%s", s)
	}
}

// TestRepeatedRunsUsageErrors: the flags' bounds, named.
func TestRepeatedRunsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-profile-runs", "11"}, "--num-profile-runs must be between 1 and 10"},
		{[]string{"--confidence-level", "1.5"}, "--confidence-level must be > 0 and < 1"},
		{[]string{"--num-profile-runs", "2", "--profile-run-cooldown-seconds", "-1"}, "--profile-run-cooldown-seconds must be ≥ 0"},
	} {
		err := refusal(append([]string{"--ui", "none", "--output-artifact-dir", t.TempDir()}, tc.args...), func(c cmdline.Config) error {
			_, err := runConfig(t.Context(), c, io.Discard, io.Discard)
			return err
		})
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestRepeatedSweep: a sweep run twice has its value folders in each
// run's folder and, per value, the aggregate over the runs in
// aggregate/<value>/, as AIPerf lays a repeated sweep out; the console
// shows per value the headline metrics' intervals, not the pooled table.
func TestRepeatedSweep(t *testing.T) {
	dir := t.TempDir()
	c := parseArgs(t, "--ui", "none", "--streaming", "--no-gpu-telemetry", "--no-server-metrics", "--output-artifact-dir", dir,
		"--num-profile-runs", "2", "--isl", "16,48", "--osl", "2", "--request-count", "2")
	var out strings.Builder
	if _, err := runConfig(t.Context(), c, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	if h := rows["isl"]; !strings.Contains(h, "out tok/s") || !strings.Contains(h, "TTFT p95") || !strings.Contains(h, "req/s") {
		t.Errorf("no per-value header (isl … out tok/s, TTFT p95, req/s):\n%s", out.String())
	}
	for _, v := range []string{"16", "48"} {
		// runs, then three metrics each with its half width.
		if f := strings.Fields(rows[v]); len(f) != 11 || f[1] != "2" || strings.Count(rows[v], " ± ") != 3 {
			t.Errorf("isl %s: row %q, want 2 runs and three means ± half widths", v, rows[v])
		}
	}
	if strings.Contains(out.String(), "Request throughput") {
		t.Errorf("the pooled table is printed for a sweep:\n%s", out.String())
	}
	for _, run := range []string{"run_0001", "run_0002"} {
		if _, err := os.Stat(filepath.Join(dir, FolderProfileRuns, run, "isl_48", spec.FileJSON)); err != nil {
			t.Error(err)
		}
	}
	agg := readJSON(t, filepath.Join(dir, FolderAggregate, "isl_48", export.AggregateJSONFile))
	isl := agg["metrics"].(map[string]any)["input_sequence_length_avg"].(map[string]any)
	if isl["mean"] != 48.0 || isl["std"] != 0.0 || agg["metadata"].(map[string]any)["num_successful_runs"] != 2.0 {
		t.Errorf("aggregate of isl_48: ISL %v, metadata %v", isl, agg["metadata"])
	}
}
