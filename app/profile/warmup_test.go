package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/telemetry"
)

// TestWarmupPlan: the warmup stage's bound (count, time or both) and load
// (its own, or the first stage's), one row each.
func TestWarmupPlan(t *testing.T) {
	t.Parallel()
	synthetic := &datasets.Dataset{Name: "synthetic", Conversations: []datasets.Conversation{{ID: "a", Turns: []datasets.Turn{{Text: "x"}}}}}
	for _, tc := range []struct {
		name     string
		mod      func(*cmdline.Config)
		count    int
		duration time.Duration
		limit    int  // in flight at the start (0: no cap)
		open     bool // paced by a schedule
	}{
		{"by count, the stage's concurrency", func(c *cmdline.Config) { c.Concurrency, c.WarmupCount = "4", 6 }, 6, 0, 4, false},
		{"by time", func(c *cmdline.Config) { c.Concurrency, c.WarmupDuration = "4", time.Second }, 0, time.Second, 4, false},
		{"both: whichever ends first", func(c *cmdline.Config) { c.WarmupCount, c.WarmupDuration = 50, 2*time.Second }, 50, 2 * time.Second, 1, false},
		{"its own concurrency", func(c *cmdline.Config) { c.Concurrency, c.WarmupCount, c.WarmupConcurrency = "1,2", 5, 8 }, 5, 0, 8, false},
		{"its own rate, uncapped", func(c *cmdline.Config) { c.Concurrency, c.WarmupDuration, c.WarmupRate = "", time.Second, 30 }, 0, time.Second, 0, true},
		{"its own rate under its concurrency", func(c *cmdline.Config) {
			c.Concurrency, c.RequestRate, c.WarmupCount, c.WarmupRate, c.WarmupConcurrency = "", "5", 9, 30, 3
		}, 9, 0, 3, true},
		{"its own rate under the stage's cap", func(c *cmdline.Config) { c.Concurrency, c.WarmupCount, c.WarmupRate = "6", 9, 30 }, 9, 0, 6, true},
		{"a rate stage warms up closed-loop", func(c *cmdline.Config) { c.Concurrency, c.RequestRate, c.WarmupCount = "", "20", 4 }, 4, 0, 20, false},
		{"its concurrency replaces users", func(c *cmdline.Config) {
			c.Concurrency, c.UserCentricRate, c.NumUsers, c.RequestCount, c.WarmupCount, c.WarmupConcurrency = "", 4, 2, 5, 3, 2
		}, 3, 0, 2, false},
	} {
		c := cmdline.Config{Model: "m", ISL: 8, Timeout: time.Second, ArrivalPattern: "constant", Smoothness: 1}
		tc.mod(&c)
		p, err := planOf(&c, synthetic)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		w := p.stages[0]
		if w.Phase.String() != "warmup" || p.stages[1].Phase.String() != "profile" {
			t.Fatalf("%s: stages %v, %v; want the warmup first", tc.name, w.Phase, p.stages[1].Phase)
		}
		limit := 0
		if w.Limit != nil {
			limit = w.Limit(0)
		}
		if w.Count != tc.count || w.Duration != tc.duration || limit != tc.limit || (w.Schedule != nil) != tc.open || (tc.limit > 0 && w.Users != nil) {
			t.Errorf("%s: warmup count %d, duration %s, limit %d, open %v, users %v; want %d, %s, %d, %v", tc.name,
				w.Count, w.Duration, limit, w.Schedule != nil, w.Users != nil, tc.count, tc.duration, tc.limit, tc.open)
		}
	}
}

// TestBadWarmupFlagsNameTheFlag: each refusal names the flag at fault.
func TestBadWarmupFlagsNameTheFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--warmup-duration", "-1"}, "--warmup-duration must be ≥ 0"},
		{[]string{"--warmup-duration", "inf"}, "--warmup-duration must be a finite number"},
		{[]string{"--warmup-request-count", "2", "--warmup-concurrency", "-2"}, "--warmup-concurrency must be ≥ 1"},
		{[]string{"--warmup-request-count", "2", "--warmup-request-rate", "-3"}, "--warmup-request-rate must be ≥ 1e-06"},
		{[]string{"--warmup-concurrency", "4"}, "--warmup-concurrency sets the warmup's load: bound the warmup"},
		{[]string{"--warmup-request-rate", "4"}, "--warmup-request-rate sets the warmup's load"},
		{[]string{"--warmup-duration", "1", "--warmup-request-rate", "4", "--arrival-pattern", "bursty"}, "--arrival-pattern"},
	} {
		err := refusal(append(tc.args, "--ui", "none", "--output-artifact-dir", t.TempDir()), func(c cmdline.Config) error {
			_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
			return err
		})
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}

// phaseRecords splits a run's per-request records by benchmark phase:
// each record's [start, end] in ns since the epoch.
func phaseRecords(t *testing.T, dir string) map[string][][2]int64 {
	t.Helper()
	out := map[string][][2]int64{}
	for _, l := range apptest.RecordLines(t, dir) {
		md := l["metadata"].(map[string]any)
		start, _ := md["request_start_ns"].(float64)
		end, _ := md["request_end_ns"].(float64)
		if start == 0 || end == 0 {
			t.Fatalf("record without its times: %v", md)
		}
		ph := md["benchmark_phase"].(string)
		out[ph] = append(out[ph], [2]int64{int64(start), int64(end)})
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	}
	return out
}

// maxOverlap is the most intervals open at once.
func maxOverlap(rs [][2]int64) int {
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for _, r := range rs {
		evs = append(evs, ev{r[0], 1}, ev{r[1], -1})
	}
	// Ends before starts at one instant: a slot freed is taken again.
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta
	})
	n, most := 0, 0
	for _, e := range evs {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// TestWarmupEndToEnd runs warmups on the mock: by time (a count it cannot
// reach in time given too), at their own concurrency or rate, their
// records apart from the profile's and out of its metrics. Timing is
// judged with wide margins.
func TestWarmupEndToEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each request takes ≥ 30 ms: requests overlap whenever they may.
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	const profileCount = 5
	for _, tc := range []struct {
		name  string
		dur   time.Duration // --warmup-duration
		args  []string
		check func(t *testing.T, warm [][2]int64)
	}{
		{"by time at its own concurrency", 600 * time.Millisecond, []string{"--warmup-duration", "0.6", "--warmup-request-count", "100000", "--warmup-concurrency", "3"},
			func(t *testing.T, warm [][2]int64) {
				if n := maxOverlap(warm); n < 2 || n > 3 {
					t.Errorf("warmup ran %d requests at once, want 3 (--warmup-concurrency; the profile's is 1)", n)
				}
			}},
		{"by time at its own rate", 500 * time.Millisecond, []string{"--warmup-duration", "0.5", "--warmup-request-rate", "40", "--warmup-concurrency", "16", "--arrival-pattern", "constant"},
			func(t *testing.T, warm [][2]int64) {
				// 40/s for 0.5 s: 20 sends, 25 ms apart.
				if len(warm) < 10 || len(warm) > 22 {
					t.Fatalf("%d warmup requests, want about 20 (40/s for 0.5 s)", len(warm))
				}
				gap := time.Duration(warm[len(warm)-1][0]-warm[0][0]) / time.Duration(len(warm)-1)
				if gap < 12*time.Millisecond || gap > 60*time.Millisecond {
					t.Errorf("warmup requests %s apart on average, want about 25 ms (40/s)", gap)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"--url", mock.URL(), "-m", "mock", "--streaming", "--concurrency", "1", "--request-count", fmt.Sprint(profileCount),
				"--isl", "16", "--osl", "5", "--ui", "none", "--no-gpu-telemetry", "--no-server-metrics", "--output-artifact-dir", dir}, tc.args...)
			res, err := runConfig(ctx, parseArgs(t, args...), io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cancelled || res.AllFailed() {
				t.Fatalf("cancelled %v, all failed %v", res.Cancelled, res.AllFailed())
			}
			recs := phaseRecords(t, dir)
			warm, prof := recs["warmup"], recs["profiling"]
			if len(warm) < 3 || len(prof) != profileCount {
				t.Fatalf("%d warmup and %d profiling records, want some and %d", len(warm), len(prof), profileCount)
			}
			// Ended by its time: no warmup request issued after it, and
			// the profile starts once it ended.
			dur := tc.dur
			lastWarm := time.Duration(warm[len(warm)-1][0] - warm[0][0])
			firstProf := time.Duration(prof[0][0] - warm[0][0])
			if lastWarm > dur+400*time.Millisecond || firstProf < dur-100*time.Millisecond {
				t.Errorf("last warmup request %s and first profile request %s after the warmup's first, want ≤ and ≥ about %s", lastWarm, firstProf, dur)
			}
			if n := maxOverlap(prof); n > 1 {
				t.Errorf("profile ran %d requests at once, want 1 (--concurrency)", n)
			}
			tc.check(t, warm)
			// The profile's metrics count its own requests; the warmup's
			// are under warmup_metrics.
			m := apptest.ReadExport(t, dir)
			if got := apptest.RunAvg(t, m, "request_count"); got != profileCount {
				t.Errorf("profile request_count %v, want %d", got, profileCount)
			}
			wm, ok := m["warmup_metrics"].(map[string]any)
			if !ok {
				t.Fatalf("no warmup_metrics in the export")
			}
			if got := apptest.RunAvg(t, wm, "request_count"); got != float64(len(warm)) {
				t.Errorf("warmup request_count %v, want %d", got, len(warm))
			}
			ic := m["input_config"].(map[string]any)
			if v, _ := cmdline.PathValue(ic, "loadgen.warmup_duration"); v != dur.Seconds() {
				t.Errorf("input_config loadgen.warmup_duration %v, want %v", v, dur.Seconds())
			}
		})
	}
}

// TestConfigFileRunsProfile: `surge profile -f` runs what the file says,
// the command line overriding it, and input_config shows the result.
func TestConfigFileRunsProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfg, []byte("loadgen:\n  concurrency: 2\n  request_count: 9\n  warmup_request_count: 2\nisl: 16\nosl: 4\nstreaming: true\nui: none\nno-gpu-telemetry: true\nno-server-metrics: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := runConfig(context.Background(), parseArgs(t, "-f", cfg, "--request-count", "3", "--output-artifact-dir", out), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m := apptest.ReadExport(t, out)
	if got := apptest.RunAvg(t, m, "request_count"); got != 3 {
		t.Errorf("request_count %v, want 3 (the command line's)", got)
	}
	ic := m["input_config"].(map[string]any)
	for path, want := range map[string]any{"loadgen.concurrency": 2.0, "loadgen.request_count": 3.0, "loadgen.warmup_request_count": 2.0,
		"input.prompt.input_tokens.mean": 16.0, "config_file": cfg} {
		if v, _ := cmdline.PathValue(ic, path); v != want {
			t.Errorf("input_config %s = %v, want %v", path, v, want)
		}
	}
}

// TestWarmupLeftOutOfServerMetrics: the server's counters count from the
// warmup's last scrape, so the warmup's tokens are not in the run's
// server_metrics_export.json (the mock counts every token it streams),
// but for those of its last moments.
func TestWarmupLeftOutOfServerMetrics(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close(context.Background())
	dir := t.TempDir()
	// About 160 warmup requests of 5 tokens (1 s, 3 at once), then 5
	// profile requests of 5.
	args := []string{"--url", mock.URL(), "-m", "mock", "--streaming", "--concurrency", "1", "--request-count", "5",
		"--isl", "16", "--osl", "5", "--warmup-duration", "1", "--warmup-request-count", "100000", "--warmup-concurrency", "3",
		"--server-metrics-interval", "0.05", "--ui", "none", "--no-gpu-telemetry", "--output-artifact-dir", dir}
	if _, err := runConfig(ctx, parseArgs(t, args...), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	recs := phaseRecords(t, dir)
	warm, prof := recs["warmup"], recs["profiling"]
	// The baseline is the warmup's last scrape, up to an interval (longer
	// on a busy machine) before it ends: the warmup requests that ended
	// in its last 250 ms, or after, may count.
	late := 0
	for _, w := range warm {
		if w[1] > prof[0][0]-int64(250*time.Millisecond) {
			late++
		}
	}
	if late > len(warm)/2 {
		t.Fatalf("%d of %d warmup requests in its last 250 ms: too few before them for the test to tell", late, len(warm))
	}
	b, err := os.ReadFile(filepath.Join(dir, telemetry.ServerMetricsJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var export struct {
		Metrics map[string]struct {
			Series []struct {
				Stats struct {
					Total *float64 `json:"total"`
				} `json:"stats"`
			} `json:"series"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &export); err != nil {
		t.Fatal(err)
	}
	s := export.Metrics["vllm:generation_tokens_total"].Series
	if len(s) != 1 || s[0].Stats.Total == nil {
		t.Fatalf("vllm:generation_tokens_total: %+v, want one series with a total", s)
	}
	if got, most := *s[0].Stats.Total, float64(5*(len(prof)+late)); got < 5 || got > most {
		t.Errorf("server generation tokens in the run %v, want the profile's 25 and at most the last %d warmup requests' (≤ %v), not all %d warmup requests' %d",
			got, late, most, len(warm), 5*len(warm))
	}
}
