package artifact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oldSweep is a sweep exported before run folders: one folder, its records
// marked by stage, the summary listing the stages.
const oldSweep = "../report/testdata/sweep"

// splitSweep lays oldSweep out as sweeps are exported now (AIPerf's
// layout): the summary at the top with run_info.stage_folders, each
// stage's records in its own concurrency_<value>/ folder. With aiperf set
// the top summary is left out and each folder gets a summary of its own
// built from the stage, with a sweep_aggregate/ beside them, as AIPerf
// itself writes a sweep.
func splitSweep(t *testing.T, aiperf bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	if err := os.MkdirAll(filepath.Join(dir, SweepAggregateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(oldSweep, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	stages := sum["stages"].([]any)
	var folders []any
	for _, s := range stages {
		folders = append(folders, fmt.Sprintf("concurrency_%v", s.(map[string]any)["value"]))
	}
	write := func(path string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !aiperf {
		sum["run_info"].(map[string]any)["stage_folders"] = folders
		write(filepath.Join(dir, SummaryFile), sum)
	} else {
		knee := sum["knee"].(map[string]any)
		write(filepath.Join(dir, SweepAggregateDir, SweepFile), map[string]any{"aggregation_type": "sweep",
			"knee": map[string]any{"parameter": "concurrency", "knee_value": knee["knee_value"], "recommended_value": knee["recommended_value"]}})
	}
	lines := map[int][]byte{}
	f, err := os.Open(filepath.Join(oldSweep, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Metadata struct{ Stage int } `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines[l.Metadata.Stage] = append(append(lines[l.Metadata.Stage], sc.Bytes()...), '\n')
	}
	for i, s := range stages {
		sub := filepath.Join(dir, folders[i].(string))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, RecordsFile), lines[i], 0o644); err != nil {
			t.Fatal(err)
		}
		if aiperf {
			st := s.(map[string]any)
			write(filepath.Join(sub, SummaryFile), map[string]any{
				"time_to_first_token": st["time_to_first_token"], "inter_token_latency": st["inter_token_latency"],
				"request_latency":         st["request_latency"],
				"request_count":           map[string]any{"unit": "requests", "avg": st["request_count"]},
				"error_request_count":     map[string]any{"unit": "requests", "avg": st["error_request_count"]},
				"output_token_throughput": map[string]any{"unit": "tokens/sec", "avg": st["output_token_throughput"]},
				"request_throughput":      map[string]any{"unit": "requests/sec", "avg": st["request_throughput"]},
				"benchmark_duration":      map[string]any{"unit": "sec", "avg": st["benchmark_duration"]},
				"input_config":            sum["input_config"], "start_time": sum["start_time"], "end_time": sum["end_time"],
			})
		}
	}
	return dir
}

// TestSweepLayouts: a sweep reads back the same whichever way it was laid
// out: surge's old single folder, run folders per value, or AIPerf's own
// sweep (no summary at the top: the stages come from the values' folders).
func TestSweepLayouts(t *testing.T) {
	t.Parallel()
	old, err := Load(oldSweep)
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Summary.Stages) != 4 || len(old.Records) == 0 {
		t.Fatalf("the old sweep has %d stages and %d records", len(old.Summary.Stages), len(old.Records))
	}
	split, err := Load(splitSweep(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old.Records, split.Records); diff != "" {
		t.Errorf("records of the sweep in run folders (-old +new):\n%s", diff)
	}
	if diff := cmp.Diff(old.Summary.Stages, split.Summary.Stages); diff != "" {
		t.Errorf("stages (-old +new):\n%s", diff)
	}

	own, err := Load(splitSweep(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old.Records, own.Records); diff != "" {
		t.Errorf("records of AIPerf's layout (-old +new):\n%s", diff)
	}
	if diff := cmp.Diff(old.Summary.Stages, own.Summary.Stages); diff != "" {
		t.Errorf("stages built from the values' folders (-old +new):\n%s", diff)
	}
	if diff := cmp.Diff(old.Summary.Knee, own.Summary.Knee); diff != "" {
		t.Errorf("knee from sweep_aggregate (-old +new):\n%s", diff)
	}
	if own.Summary.StartTime != old.Summary.StartTime || len(own.Summary.InputConfig) == 0 {
		t.Errorf("start %q, input_config %d keys: want the first value's", own.Summary.StartTime, len(own.Summary.InputConfig))
	}
}

// TestSweepFoldersAreNotPaths: stage_folders naming a path outside the
// folder are ignored, and a folder with nothing in it is still an error.
func TestSweepFoldersAreNotPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	run := filepath.Join(dir, "run")
	for _, d := range []string{outside, run} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, RecordsFile), []byte(`{"metadata":{},"metrics":{}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := `{"request_count":{"unit":"requests","avg":1},"run_info":{"stage_folders":["../outside",".."]}}`
	if err := os.WriteFile(filepath.Join(run, SummaryFile), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 0 {
		t.Errorf("read %d records from outside the run's folder", len(r.Records))
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("an empty folder: %v", err)
	}
}
