package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/surgebench/surge/app/spec"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/metrics/export"
)

// sweepRun runs args against the embedded mock into a temporary folder
// and returns the folder and the console.
func sweepRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	c := parseArgs(t, append([]string{"--ui", "none", "--streaming", "--no-gpu-telemetry", "--no-server-metrics",
		"--output-artifact-dir", dir, "--random-seed", "3"}, args...)...)
	var out bytes.Buffer
	if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out.String())
	}
	return dir, out.String()
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestSweepListFlagsEndToEnd: each list flag sweeps as stages of one run
// against the embedded mock: a folder per value named as AIPerf names
// it, each value's exports showing the value took effect, the sweep
// aggregate and the console's stage table.
func TestSweepListFlagsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		folders []string
		// check reads a value's summary and says whether it shows value i.
		check func(m map[string]any, i int) bool
	}{
		{"isl", []string{"--isl", "24,96", "--osl", "4", "--request-count", "2"}, []string{"isl_24", "isl_96"},
			func(m map[string]any, i int) bool {
				return apptest.RunAvg(t, m, "input_sequence_length") == []float64{24, 96}[i]
			}},
		{"osl", []string{"--osl", "3,9", "--isl", "16", "--request-count", "2"}, []string{"osl_3", "osl_9"},
			func(m map[string]any, i int) bool {
				return apptest.RunAvg(t, m, "output_sequence_length") == []float64{3, 9}[i]
			}},
		{"request-count", []string{"--request-count", "2,3", "--isl", "16", "--osl", "2"}, []string{"request_count_2", "request_count_3"},
			func(m map[string]any, i int) bool { return apptest.RunAvg(t, m, "request_count") == float64(2+i) }},
		{"benchmark-duration", []string{"--benchmark-duration", "0.3,0.6", "--isl", "16", "--osl", "2", "--benchmark-grace-period", "5"},
			[]string{"benchmark_duration_0.3", "benchmark_duration_0.6"},
			func(m map[string]any, i int) bool { return apptest.RunAvg(t, m, "request_count") >= 1 }},
		{"num-users", []string{"--user-centric-rate", "20", "--num-users", "1,2", "--request-count", "3", "--isl", "16", "--osl", "2"},
			[]string{"num_users_1", "num_users_2"},
			func(m map[string]any, i int) bool { return apptest.RunAvg(t, m, "request_count") == 3 }},
		{"user-centric-rate", []string{"--user-centric-rate", "10,20", "--num-users", "2", "--request-count", "3", "--isl", "16", "--osl", "2"},
			[]string{"user_centric_rate_10.0", "user_centric_rate_20.0"},
			func(m map[string]any, i int) bool { return apptest.RunAvg(t, m, "request_count") == 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, out := sweepRun(t, tc.args...)
			for i, f := range tc.folders {
				m := apptest.ReadExport(t, filepath.Join(dir, f))
				if !tc.check(m, i) {
					t.Errorf("%s: the value did not take effect", f)
				}
				if !strings.Contains(out, filepath.Join(dir, f)) {
					t.Errorf("console does not list %s", f)
				}
			}
			agg := readJSON(t, filepath.Join(dir, FolderSweepAggregate, export.SweepJSONFile))
			meta := agg["metadata"].(map[string]any)["sweep_parameters"].([]any)
			name := strings.ReplaceAll(tc.name, "-", "_")
			if len(meta) != 1 || meta[0].(map[string]any)["name"] != name {
				t.Errorf("sweep_parameters %v, want %s", meta, name)
			}
			if !strings.Contains(out, "Stages (latencies in ms)") || !strings.Contains(out, " "+name+" ") {
				t.Errorf("no stage table headed %s:\n%s", name, out)
			}
		})
	}
}

// TestSweepGridAndZip: two lists make every combination (grid) or pair
// up (zip), each a folder AIPerf's way and a combination in the
// aggregate keyed by both parameters; the stage table names each point.
func TestSweepGridAndZip(t *testing.T) {
	t.Parallel()
	dir, out := sweepRun(t, "--isl", "16,48", "--concurrency", "1,2", "--request-count", "2", "--osl", "2")
	want := []string{"variation_0000_concurrency_1_isl_16", "variation_0001_concurrency_1_isl_48",
		"variation_0002_concurrency_2_isl_16", "variation_0003_concurrency_2_isl_48"}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f, spec.FileJSON)); err != nil {
			t.Errorf("grid: %v", err)
		}
	}
	if isl := apptest.RunAvg(t, apptest.ReadExport(t, filepath.Join(dir, want[3])), "input_sequence_length"); isl != 48 {
		t.Errorf("%s: ISL %g, want 48", want[3], isl)
	}
	// Each point's input_config says its own values and seed; the run's
	// keeps the lists.
	ic := apptest.ReadExport(t, filepath.Join(dir, want[3]))["input_config"].(map[string]any)
	if v, _ := cmdline.PathValue(ic, "input.prompt.input_tokens.mean"); v != 48.0 {
		t.Errorf("%s: input_config isl %v, want 48", want[3], v)
	}
	if v, _ := cmdline.PathValue(ic, "loadgen.concurrency"); v != 2.0 {
		t.Errorf("%s: input_config concurrency %v, want 2", want[3], v)
	}
	if v, _ := cmdline.PathValue(ic, "input.random_seed"); v != 6.0 {
		t.Errorf("%s: input_config seed %v, want 3 + 3", want[3], v)
	}
	top := apptest.ReadExport(t, dir)["input_config"].(map[string]any)
	if v, _ := cmdline.PathValue(top, "input.prompt.input_tokens.mean"); fmt.Sprint(v) != "[16 48]" {
		t.Errorf("run's input_config isl %v, want the list", v)
	}
	agg := readJSON(t, filepath.Join(dir, FolderSweepAggregate, export.SweepJSONFile))
	combos := agg["per_combination_metrics"].([]any)
	if len(combos) != 4 {
		t.Fatalf("grid: %d combinations, want 4", len(combos))
	}
	if p := combos[1].(map[string]any)["parameters"].(map[string]any); p["concurrency"] != 1.0 || p["isl"] != 48.0 {
		t.Errorf("combination 1 parameters %v", p)
	}
	if !strings.Contains(out, "concurrency=2, isl=48") {
		t.Errorf("stage table does not name the points:\n%s", out)
	}

	dir, _ = sweepRun(t, "--sweep-mode", "zip", "--isl", "16,48", "--osl", "2,4", "--request-count", "2")
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "variation_") {
			got = append(got, e.Name())
		}
	}
	if strings.Join(got, " ") != "variation_0000_isl_16_osl_2 variation_0001_isl_48_osl_4" {
		t.Errorf("zip folders %v", got)
	}
}

// TestSweepUsageErrors: bad combinations are usage errors naming the flags.
func TestSweepUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sweep-mode", "zip", "--isl", "16,32", "--osl", "2,4,8"}, "--isl lists 2 values and --osl 3"},
		{[]string{"--sweep-mode", "diagonal", "--isl", "16,32"}, "--sweep-mode \"diagonal\""},
		{[]string{"--isl", "1,2,3,4,5,6,7,8", "--osl", "1,2,3,4,5,6,7,8", "--request-count", "1,2,3,4,5"}, "--isl and --osl and --request-count make 320 combinations"},
		{[]string{"--isl", "16,32", "--input-file", "x.jsonl"}, "--isl lists values"},
		{[]string{"--isl", "16,32", "--shard", "0/2"}, "sweep over one load host"},
		{[]string{"--num-users", "1,2"}, "--num-users needs --user-centric-rate"},
		{[]string{"--sweep-mode", "diagonal", "--concurrency", "1,2"}, "--sweep-mode \"diagonal\": want grid or zip"},
	} {
		c := parseArgs(t, append([]string{"--ui", "none", "--output-artifact-dir", t.TempDir()}, tc.args...)...)
		_, err := prepareConfig(c, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSweepSameSeed: by default a sweep's values get prompts of their own
// (seeded --random-seed + the value's index, as AIPerf), so a prefix cache
// sees nothing of an earlier value again; --parameter-sweep-same-seed
// sends every value the same prompts and says so in each point's
// input_config.
func TestSweepSameSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag string
		same bool
	}{{"", false}, {"--parameter-sweep-same-seed", true}} {
		args := []string{"--concurrency", "1,2", "--request-count", "3", "--isl", "16", "--osl", "2", "--num-dataset-entries", "3"}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		dir, _ := sweepRun(t, args...)
		a, b := inputsPayloads(t, filepath.Join(dir, "concurrency_1")), inputsPayloads(t, filepath.Join(dir, "concurrency_2"))
		if len(a) != 3 || len(b) != 3 {
			t.Fatalf("%q: %d and %d request bodies, want 3 each", tc.flag, len(a), len(b))
		}
		if alike := slices.Equal(a, b); alike != tc.same {
			t.Errorf("%q: the two values' request bodies alike: %v, want %v\n%q\n%q", tc.flag, alike, tc.same, a, b)
		}
	}
	// In a list-flag sweep the point's input_config carries its seed.
	dir, _ := sweepRun(t, "--isl", "16,48", "--request-count", "2", "--osl", "2", "--parameter-sweep-same-seed")
	ic := apptest.ReadExport(t, filepath.Join(dir, "isl_48"))["input_config"].(map[string]any)
	if v, _ := cmdline.PathValue(ic, "input.random_seed"); v != 3.0 {
		t.Errorf("isl_48 with --parameter-sweep-same-seed: input_config seed %v, want 3", v)
	}
}
