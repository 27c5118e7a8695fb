package metrics

import (
	"maps"
	"slices"
)

// ModelSummary is one model's share of a run that sent its requests to
// several models (or LoRA adapters): its full summary, as if its requests
// had been a run of their own over the run's time.
type ModelSummary struct {
	// Model is the name the requests sent.
	Model string
	// Summary is its metrics: AIPerf's per-request distributions and the
	// run-level ones (its throughputs over its own first request to its
	// last response).
	*Summary
}

// modelSummaries summarises each model's aggregate, by name (nil for
// fewer than one: a run of one model records none).
func modelSummaries(models map[string]*aggregate, st *State) []ModelSummary {
	if len(models) == 0 {
		return nil
	}
	var out []ModelSummary
	for _, name := range slices.Sorted(maps.Keys(models)) {
		a := models[name]
		s := summaryOf(a, st.modelTokenizer)
		finishRun(s.Run, st.Origin, a.okStart, a.okEnd, st.goodput, st.costPerHour)
		out = append(out, ModelSummary{Model: name, Summary: s})
	}
	return out
}
