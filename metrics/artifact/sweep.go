package artifact

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SweepAggregateDir is the folder of a sweep's cross-value files, and
// SweepFile its JSON (AIPerf's names).
const (
	SweepAggregateDir = "sweep_aggregate"
	SweepFile         = "profile_export_aiperf_sweep.json"
)

// stageDir is one value's run folder of a sweep.
type stageDir struct {
	name  string
	mode  string
	value float64
}

// sweepStages finds the run folders of a sweep exported as AIPerf lays one
// out (one folder per value, "concurrency_10/…", beside sweep_aggregate/):
// the folders run_info.stage_folders names (surge), else the sub-folders
// named <parameter>_<value> that hold a run, in order of value. None when
// dir is not such a sweep.
func sweepStages(dir string, s *Summary) []stageDir {
	var names []string
	if s != nil {
		if raw, ok := s.RunInfo["stage_folders"].([]any); ok {
			for _, n := range raw {
				if n, ok := n.(string); ok && n != "" && !strings.ContainsAny(n, `/\`) && n != ".." {
					names = append(names, n)
				}
			}
		}
	}
	if names == nil {
		if _, err := os.Stat(filepath.Join(dir, SweepAggregateDir)); err != nil {
			return nil
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != SweepAggregateDir {
				names = append(names, e.Name())
			}
		}
	}
	var out []stageDir
	for _, n := range names {
		if !holdsRun(filepath.Join(dir, n)) {
			continue
		}
		sd := stageDir{name: n}
		if i := strings.LastIndexByte(n, '_'); i > 0 {
			if v, err := strconv.ParseFloat(n[i+1:], 64); err == nil {
				sd.mode, sd.value = n[:i], v
			}
		}
		out = append(out, sd)
	}
	if s == nil || s.RunInfo["stage_folders"] == nil {
		slices.SortStableFunc(out, func(a, b stageDir) int { return cmp.Compare(a.value, b.value) })
	}
	return out
}

// holdsRun reports whether dir has a summary or records file.
func holdsRun(dir string) bool {
	for _, f := range []string{SummaryFile, RecordsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// loadSweep completes run with the sweep's per-value folders: their records
// (each marked with its stage) when the sweep's folder holds none of its
// own, and, when it has no summary (AIPerf's own sweeps), a summary whose
// stages are the values' summaries. It reports whether dir is a sweep.
func loadSweep(run *Run) (bool, error) {
	stages := sweepStages(run.Dir, run.Summary)
	if len(stages) == 0 {
		return false, nil
	}
	needRecords := len(run.Records) == 0
	var built []Stage
	for i, sd := range stages {
		sub, err := Load(filepath.Join(run.Dir, sd.name))
		if err != nil {
			return true, err
		}
		if needRecords {
			for _, r := range sub.Records {
				r.Stage = i
				run.Records = append(run.Records, r)
			}
		}
		if run.Summary == nil && sub.Summary != nil {
			built = append(built, stageOf(i, sd, sub.Summary))
		}
	}
	if run.Summary == nil {
		run.Summary = &Summary{Metrics: map[string]Stat{}, Stages: built, Raw: map[string]json.RawMessage{}}
		if len(built) > 0 {
			first, err := Load(filepath.Join(run.Dir, stages[0].name))
			if err == nil && first.Summary != nil {
				run.Summary.InputConfig, run.Summary.Version = first.Summary.InputConfig, first.Summary.Version
				run.Summary.StartTime = first.Summary.StartTime
			}
			if last, err := Load(filepath.Join(run.Dir, stages[len(stages)-1].name)); err == nil && last.Summary != nil {
				run.Summary.EndTime = last.Summary.EndTime
			}
		}
		run.Summary.Knee = sweepKnee(run.Dir, stages)
		if k := run.Summary.Knee; k != nil && k.KneeStage >= 0 && k.KneeStage < len(built) {
			built[k.KneeStage].Knee = true
		}
	}
	return true, nil
}

// stageOf is one value's summary as a sweep stage.
func stageOf(i int, sd stageDir, s *Summary) Stage {
	st := Stage{Index: i, Mode: sd.mode, Value: sd.value,
		TTFT: s.Metrics["time_to_first_token"], ITL: s.Metrics["inter_token_latency"], Latency: s.Metrics["request_latency"]}
	st.RequestCount = s.Metrics["request_count"].Avg
	st.ErrorRequestCount = s.Metrics["error_request_count"].Avg
	st.OutputTokenThroughput = s.Metrics["output_token_throughput"].Avg
	st.RequestThroughput = s.Metrics["request_throughput"].Avg
	st.DurationSec = s.Metrics["benchmark_duration"].Avg
	st.TimeBreakdown = s.Breakdown
	return st
}

// sweepKnee reads surge's knee from the sweep aggregate, when it has one.
func sweepKnee(dir string, stages []stageDir) *Knee {
	b, err := ReadSummaryFile(filepath.Join(dir, SweepAggregateDir, SweepFile))
	if err != nil {
		return nil
	}
	var doc struct {
		Knee *struct {
			Parameter        string  `json:"parameter"`
			KneeValue        float64 `json:"knee_value"`
			RecommendedValue float64 `json:"recommended_value"`
		} `json:"knee"`
	}
	if json.Unmarshal(b, &doc) != nil || doc.Knee == nil {
		return nil
	}
	k := &Knee{Mode: doc.Knee.Parameter, KneeValue: doc.Knee.KneeValue, RecommendedValue: doc.Knee.RecommendedValue,
		KneeStage: -1, RecommendedStage: -1}
	for i, sd := range stages {
		if sd.value == k.KneeValue {
			k.KneeStage = i
		}
		if sd.value == k.RecommendedValue {
			k.RecommendedStage = i
		}
	}
	return k
}

// errNoRun is Load's error for a folder with no run in it.
func errNoRun(dir string) error {
	return fmt.Errorf("run %s: neither %s nor %s found (nor a sweep's run folders)", dir, SummaryFile, RecordsFile)
}
