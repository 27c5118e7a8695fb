package artifact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Repeated runs of one plan (--num-profile-runs), laid out as AIPerf lays
// them out: one run folder per run under profile_runs/ (run_0001 on), the
// statistics over the runs in aggregate/, whose JSON (surge's
// export.AggregateJSONFile) says the confidence level.
const (
	ProfileRunsDir = "profile_runs"
	AggregateDir   = "aggregate"
	AggregateFile  = "profile_export_aiperf_aggregate.json"
)

// RepeatLabels returns the run folders' names under dir/profile_runs
// (run_0001, …), in run order; nil when dir is not a folder of repeated
// runs (or is itself a run).
func RepeatLabels(dir string) []string {
	if holdsRun(dir) {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, ProfileRunsDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	// run_NNNN sorts in run order.
	slices.Sort(out)
	return out
}

// LoadRepeats reads the runs labels names under dir/profile_runs, each as
// Load reads a run folder, with opts (a repeated sweep's runs are sweeps); nil labels
// reads every run folder there.
func LoadRepeats(dir string, labels []string, opts ...LoadOption) ([]*Run, error) {
	if labels == nil {
		labels = RepeatLabels(dir)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("run %s: no run folders in %s", dir, filepath.Join(dir, ProfileRunsDir))
	}
	runs := make([]*Run, 0, len(labels))
	for _, l := range labels {
		r, err := Load(filepath.Join(dir, ProfileRunsDir, l), opts...)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// RepeatLevel is the confidence level dir's aggregate was written at;
// 0.95 (the default of --confidence-level) when it says none.
func RepeatLevel(dir string) float64 {
	var doc struct {
		Metadata struct {
			Level float64 `json:"confidence_level"`
		} `json:"metadata"`
	}
	b, err := ReadSummaryFile(filepath.Join(dir, AggregateDir, AggregateFile))
	if err != nil || json.Unmarshal(b, &doc) != nil || !(doc.Metadata.Level > 0 && doc.Metadata.Level < 1) {
		return 0.95
	}
	return doc.Metadata.Level
}
