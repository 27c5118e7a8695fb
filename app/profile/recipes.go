package profile

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/loadgen/search"
	"github.com/surgebench/surge/metrics"
)

// SearchHistoryFile is AIPerf's record of a recipe's search.
const SearchHistoryFile = "search_history.json"

// concurrencyPath is the swept dimension as AIPerf names it.
const concurrencyPath = "phases.profiling.concurrency"

// searchHistory is search_history.json for a recipe's search, in AIPerf's
// shape: the config, one iteration a probe (its output token throughput
// the objective, its verdict the feasibility), the best feasible one, and
// the boundary_summary of a 1D SLA search.
func searchHistory(sr *spec.Search, res *search.Result, stages []metrics.StageSummary) map[string]any {
	filters := make([]map[string]any, len(sr.SLAs))
	for i, f := range sr.SLAs {
		filters[i] = map[string]any{"metric_tag": f.Metric, "stat": f.Stat, "op": f.Op, "threshold": f.Threshold}
	}
	throughput := func(stage int) any {
		for _, st := range stages {
			if st.Index == stage {
				return st.OutputTokenThroughput
			}
		}
		return nil
	}
	iterations := make([]map[string]any, len(res.Probes))
	var best, feasibleMax, infeasibleMin map[string]any
	for i, p := range res.Probes {
		it := map[string]any{"iteration_idx": i, "variation_values": map[string]any{concurrencyPath: p.Value},
			"objective_values": []any{throughput(p.Stage)}, "feasible": p.Verdict == search.Pass,
			"surge": map[string]any{"stage": p.Stage, "judgement": p.Reason, "settled": p.Stable, "requests": p.Requests}}
		iterations[i] = it
		if p.Verdict == search.Pass {
			if feasibleMax == nil || p.Value > feasibleMax["value"].(float64) {
				feasibleMax = map[string]any{"value": p.Value, "iteration_idx": i, "objective_value": throughput(p.Stage)}
				best = it
			}
			continue
		}
		if infeasibleMin == nil || p.Value < infeasibleMin["value"].(float64) {
			infeasibleMin = map[string]any{"value": p.Value, "iteration_idx": i, "first_breach": breach(sr, p)}
		}
	}
	reason := "monotonic_precision_reached"
	switch {
	case !res.Found && math.IsInf(res.Upper, 1):
		reason = "max_value_reached"
	case !res.Found:
		reason = "max_iterations"
	}
	var bestTrials []any
	if best != nil {
		bestTrials = []any{best}
	}
	return map[string]any{
		"recipe": sr.Recipe,
		"config": map[string]any{"recipe_name": sr.Recipe, "planner": "monotonic_sla", "search_style": sr.Style,
			"objective_metric": "output_token_throughput", "objective_direction": "maximize",
			"search_space": []any{map[string]any{"path": concurrencyPath, "lo": sr.Min, "hi": sr.Max, "kind": "int"}},
			"sla_filters":  filters, "max_iterations": sr.MaxProbes,
			"surge": "probes searched by bracketing and bisection (surge search), each judged by its 95% intervals"},
		"iterations": iterations, "best": best, "best_trials": bestTrials,
		"boundary_summary":   map[string]any{"swept_dim_path": concurrencyPath, "feasible_max": feasibleMax, "infeasible_min": infeasibleMin},
		"convergence_reason": reason,
	}
}

// breach is the filter that failed a probe, with what was observed.
func breach(sr *spec.Search, p search.Probe) any {
	for i, o := range sr.Objectives {
		if o.Name() != p.Limiting || i >= len(sr.SLAs) {
			continue
		}
		f := sr.SLAs[i]
		observed := p.Observed[o.Name()]
		if o.Tag == search.RequestErrorRate {
			observed *= 100
		}
		return map[string]any{"metric_tag": f.Metric, "stat": f.Stat, "op": f.Op, "threshold": f.Threshold, "observed": observed}
	}
	return nil
}

// writeSearchHistory writes search_history.json into dir and says so.
func writeSearchHistory(out io.Writer, dir string, sr *spec.Search, res *search.Result, stages []metrics.StageSummary) error {
	path := filepath.Join(dir, SearchHistoryFile)
	err := WriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(searchHistory(sr, res, stages))
	})
	if err != nil {
		return fmt.Errorf("--search-recipe: %w", err)
	}
	fmt.Fprintf(out, "search recipe %s (%s): %s\n", sr.Recipe, sr.Style, path)
	return nil
}
