package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/spec"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/metrics/artifact"
)

// TestShardProcessesMergeIntoTheWholeRun is sharding end to end: one
// process runs a plan whole, three processes run its shards together
// (--start-at) against the same mock, and `surge merge` combines their
// exports into the whole run's: the same request bodies, counts and token
// totals, and the same percentiles of the lengths (the latencies are two
// runs' and may differ). Parallel: its processes send 48 short requests
// each, at 60 a second, and mostly wait.
func TestShardProcessesMergeIntoTheWholeRun(t *testing.T) {
	bin := apptest.SurgeBinary(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	plan := []string{"profile", "--url", mock.URL(), "--model", "shards", "--streaming", "--ui", "none",
		"--request-rate", "60", "--arrival-pattern", "poisson", "--request-count", "48", "--warmup-request-count", "3",
		"--random-seed", "7", "--isl", "48", "--isl-stddev", "12", "--osl", "10", "--osl-stddev", "4",
		"--no-gpu-telemetry", "--no-server-metrics", "--benchmark-grace-period", "5"}
	root := t.TempDir()
	surge := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	whole := filepath.Join(root, "whole")
	if out, err := surge(append(plan, "--output-artifact-dir", whole)...); err != nil {
		t.Fatalf("whole run: %v\n%s", err, out)
	}
	// Every shard starts at one instant, far enough ahead for three
	// processes to start on a busy machine.
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	dirs := make([]string, 3)
	outs := make([]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("shard%d", i))
		wg.Go(func() {
			outs[i], errs[i] = surge(append(plan, "--shard", fmt.Sprintf("%d/3", i), "--start-at", startAt, "--output-artifact-dir", dirs[i])...)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i])
		}
	}
	merged := filepath.Join(root, "merged")
	if out, err := surge(append([]string{"merge"}, append(dirs, "-o", merged)...)...); err != nil {
		t.Fatalf("surge merge: %v\n%s", err, out)
	}

	wantSum, wantN := apptest.InputsFingerprint(t, whole)
	gotSum, gotN := apptest.InputsFingerprint(t, merged)
	if gotSum != wantSum || gotN != wantN || wantN != 51 {
		t.Errorf("merged request bodies %s (%d), the whole run's %s (%d); want 51 bodies alike", gotSum, gotN, wantSum, wantN)
	}
	w, m := apptest.ReadExport(t, whole), apptest.ReadExport(t, merged)
	fw, fm := w["fingerprint"].(map[string]any), m["fingerprint"].(map[string]any)
	if fw["workload"] == nil || fm["workload"] != fw["workload"] {
		t.Errorf("merged fingerprint %v, whole run's %v: want one workload", fm, fw)
	}
	for _, tag := range []string{"request_count", "error_request_count", "total_isl", "total_osl", "total_output_tokens"} {
		if g, want := apptest.RunAvg(t, m, tag), apptest.RunAvg(t, w, tag); g != want {
			t.Errorf("%s: merged %v, whole run %v", tag, g, want)
		}
	}
	if apptest.RunAvg(t, m, "request_count") != 48 {
		t.Errorf("merged request_count %v, want 48", apptest.RunAvg(t, m, "request_count"))
	}
	// The lengths are the plan's, whoever sent them: the merged (exact)
	// percentiles agree with the whole run's digests within their error.
	for _, tag := range []string{"input_sequence_length", "output_sequence_length"} {
		gw, gm := w[tag].(map[string]any), m[tag].(map[string]any)
		for _, stat := range []string{"avg", "min", "max", "count", "std", "p25", "p50", "p75", "p90", "p99"} {
			x, y := gw[stat].(float64), gm[stat].(float64)
			if math.Abs(x-y) > 0.02*math.Abs(x)+1 {
				t.Errorf("%s %s: merged %v, whole run %v", tag, stat, y, x)
			}
		}
	}
	// Each shard sent its third of the schedule; the merged duration
	// covers the union of their windows.
	var sent float64
	for i, d := range dirs {
		s := apptest.ReadExport(t, d)
		n := apptest.RunAvg(t, s, "request_count")
		sent += n
		if dm, ds := apptest.RunAvg(t, m, "benchmark_duration"), apptest.RunAvg(t, s, "benchmark_duration"); dm < ds {
			t.Errorf("merged benchmark_duration %v is shorter than shard %d's %v", dm, i, ds)
		}
		if n < 15 || n > 17 {
			t.Errorf("shard %d sent %v requests, want 16 ± 1", i, n)
		}
		info := s["run_info"].(map[string]any)["shard"].(map[string]any)
		if info["index"] != float64(i) || info["count"] != float64(3) || info["start_at"] == nil {
			t.Errorf("shard %d: run_info.shard %v", i, info)
		}
	}
	if sent != 48 {
		t.Errorf("shards sent %v requests, want 48", sent)
	}
	sections, _ := m["shards"].([]any)
	info := m["run_info"].(map[string]any)
	if len(sections) != 3 || info["shards"] != float64(3) || info["percentiles_from"] != "records" {
		t.Errorf("merged export: %d shard sections, run_info %v", len(sections), info)
	}
	// The merged folder reads back as a run (surge report, compare).
	run, err := artifact.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(run.Profile()); n != 48 || run.Summary.Metrics["time_to_first_token"].Count != 48 {
		t.Errorf("merged folder reads back with %d profile records, TTFT %+v", n, run.Summary.Metrics["time_to_first_token"])
	}

	// A shard of another plan is refused, naming the difference.
	other := filepath.Join(root, "other")
	if err := os.CopyFS(other, os.DirFS(dirs[2])); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(other, spec.FileJSON))
	if err := os.WriteFile(filepath.Join(other, spec.FileJSON), bytes.Replace(b, []byte(`"random_seed": 7`), []byte(`"random_seed": 8`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := surge("merge", dirs[0], dirs[1], other, "-o", filepath.Join(root, "refused"))
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cmdline.ExitUsage || !strings.Contains(out, "--random-seed 7 vs 8") {
		t.Errorf("merging another plan's shard: %v\n%s", err, out)
	}
}

// TestShardFlagsAreCheckedUpFront: bad shard settings are usage errors
// that name the flag, before anything runs.
func TestShardFlagsAreCheckedUpFront(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		set  func(c *cmdline.Config)
		want string
	}{
		{"index past the count", func(c *cmdline.Config) { c.Shard = "3/3" }, "--shard"},
		{"no shards", func(c *cmdline.Config) { c.Shard = "0/0" }, "--shard"},
		{"not i/N", func(c *cmdline.Config) { c.Shard = "two" }, "--shard"},
		{"counts disagree", func(c *cmdline.Config) { c.Shard, c.Shards = "1/3", 4 }, "disagree"},
		{"negative shards", func(c *cmdline.Config) { c.Shards = -1 }, "--shards"},
		{"no index", func(c *cmdline.Config) { c.Shards = 3 }, "JOB_COMPLETION_INDEX"},
		{"index past the count from the job", func(c *cmdline.Config) { c.Shards, c.JobIndex = 3, "3" }, "--shards 3"},
		{"bad job index", func(c *cmdline.Config) { c.Shards, c.JobIndex = 3, "x" }, "JOB_COMPLETION_INDEX"},
		{"start in the past", func(c *cmdline.Config) { c.StartAt = "2001-01-01T00:00:00Z" }, "--start-at 2001-01-01T00:00:00Z has passed"},
		{"start not a time", func(c *cmdline.Config) { c.StartAt = "noon" }, "--start-at"},
		{"concurrency below the shards", func(c *cmdline.Config) { c.Shard, c.Concurrency = "0/3", "2" }, "--concurrency 2"},
		{"sweep stage below the shards", func(c *cmdline.Config) { c.Shard, c.Concurrency = "0/3", "4,2" }, "--concurrency 2"},
		{"users below the shards", func(c *cmdline.Config) { c.Shard, c.UserCentricRate, c.NumUsers = "0/3", 5, 2 }, "--num-users 2"},
		{"live controls", func(c *cmdline.Config) { c.Shard, c.ControlAddr = "0/3", "127.0.0.1:0" }, "--control-addr"},
		{"stop conditions", func(c *cmdline.Config) { c.Shard, c.StopOn = "0/3", "error_rate:0.5@5s" }, "--stop-on"},
		{"a shard with nothing to send", func(c *cmdline.Config) { c.Shard, c.Concurrency, c.RequestCount = "2/3", "3", 2 }, "--request-count 2 leaves shard 2/3 nothing"},
	}
	for _, tc := range cases {
		c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
		tc.set(&c)
		_, err := prepareConfig(c, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a usage error naming %q", tc.name, err, tc.want)
		}
	}
	// JOB_COMPLETION_INDEX with --shards is shard i of N.
	c := apptest.RunConfig("http://127.0.0.1:1", t.TempDir())
	c.Shards, c.JobIndex, c.Concurrency = 3, "2", "6"
	p, err := prepareConfig(c, io.Discard)
	if err != nil || p.s.Shard.String() != "2/3" || p.plan.total != 4 {
		t.Errorf("--shards 3 with index 2: %v, shard %v, %d requests planned (want 2/3, 4 of 12)", err, p.s.Shard, p.plan.total)
	}
}

// TestLateShardSaysByHowMuch: a shard whose preparation outlasts
// --start-at starts at once and reports its lateness, in run_info and in
// the summary's warnings.
func TestLateShardSaysByHowMuch(t *testing.T) {
	t.Parallel()
	srv := apptest.MockForTest(t)
	dir := t.TempDir()
	c := apptest.RunConfig(srv, dir)
	c.Shard, c.StartAt = "1/2", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	p, err := prepareConfig(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p.s.StartAt = time.Now().Add(-250 * time.Millisecond) // as if preparing had taken that much too long
	var log bytes.Buffer
	o, err := p.execute(context.Background(), &log)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := p.report(o, &out); err != nil {
		t.Fatal(err)
	}
	m := apptest.ReadExport(t, dir)
	info := m["run_info"].(map[string]any)["shard"].(map[string]any)
	if late := info["late_ms"].(float64); late < 250 || late > 60_000 {
		t.Errorf("late_ms %v, want ≥ 250", late)
	}
	// Said once, in the summary.
	if strings.Count(out.String(), "warning [shard-late]: shard 1/2: started ") != 1 || strings.Contains(log.String(), "late") ||
		!strings.Contains(fmt.Sprint(m["warnings"]), "late for --start-at") {
		t.Errorf("lateness not said once in the summary: log %q, summary %q, warnings %v", log.String(), out.String(), m["warnings"])
	}
	if apptest.RunAvg(t, m, "request_count") != 6 {
		t.Errorf("shard 1/2 sent %v requests, want 6 of 12", apptest.RunAvg(t, m, "request_count"))
	}
}
