package history

import (
	"maps"
	"slices"

	"github.com/surgebench/surge/metrics/artifact"
)

// ModelMetricPrefix starts the metric names the history keeps of each
// model of a run that shared its requests among several:
// "model:NAME:TAG" (model:big:time_to_first_token, its statistics as a
// run's), which surge trend takes as any metric.
const ModelMetricPrefix = "model:"

// modelTags are each model's metrics the history keeps: its headline
// distributions, then its counts and throughput.
var modelTags = []string{"time_to_first_token", "inter_token_latency", "request_latency", "output_sequence_length"}

// modelMetrics adds to row each model's metrics, from the run's records
// (nothing for a run of one model, or one whose records do not say).
func modelMetrics(row *Row, r *artifact.Run) {
	by := map[string][]artifact.Record{}
	for _, rec := range r.Profile() {
		if rec.Model != "" {
			by[rec.Model] = append(by[rec.Model], rec)
		}
	}
	if len(by) < 2 {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(by)) {
		recs := by[name]
		for _, tag := range modelTags {
			var vals []float64
			unit := ""
			for _, rec := range recs {
				if v, ok := rec.Metrics[tag]; ok && !rec.Failed() {
					vals, unit = append(vals, v), rec.Units[tag]
				}
			}
			if len(vals) == 0 {
				continue
			}
			st := artifact.StatOf(vals)
			for _, stat := range keptStats {
				v, _ := st.Get(stat)
				row.Metrics = append(row.Metrics, Metric{ModelMetricPrefix + name + ":" + tag, stat, v, unit})
			}
		}
		for _, tag := range []string{"request_count", "error_request_count", "request_throughput", "output_token_throughput"} {
			if v, unit, ok := artifact.RunLevelOf(recs, tag); ok {
				row.Metrics = append(row.Metrics, Metric{ModelMetricPrefix + name + ":" + tag, "avg", v, unit})
			}
		}
	}
}

// isStatName reports whether s names a statistic: avg, min, max, std,
// count, sum or pNN.
func isStatName(s string) bool {
	switch s {
	case "avg", "min", "max", "std", "count", "sum":
		return true
	}
	if len(s) < 2 || s[0] != 'p' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
