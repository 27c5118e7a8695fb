package export

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/surgebench/surge/metrics"
)

// modelsValue is the JSON's "models": each model's metrics keyed by tag,
// as the summary's own (AIPerf's shape), with its error summary.
func modelsValue(models []metrics.ModelSummary, lora map[string]string) any {
	out := newObject()
	for _, m := range models {
		o := newObject()
		if base, ok := lora[m.Model]; ok {
			o.set("lora_base_model", base)
		}
		addMetrics(o, m.Summary)
		o.set("error_summary", errorSummary(m.Summary))
		out.set(m.Model, o)
	}
	return out
}

// writeModelsCSV adds one section per model: its distributions then its
// run-level metrics, under a "Model,<name>" line.
func writeModelsCSV(cw *csv.Writer, models []metrics.ModelSummary) {
	for _, m := range models {
		_ = cw.Write(nil)
		_ = cw.Write([]string{"Model", m.Model})
		writeMetricsCSV(cw, m.Metrics, m.Run, false)
	}
}

// consoleModels prints one line per model of a run that shared its
// requests among several: its requests, errors, throughputs and headline
// latencies.
func consoleModels(w io.Writer, models []metrics.ModelSummary) {
	if len(models) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPer model:")
	rows := [][]string{{"model", "reqs", "err", "tok/s", "req/s", "TTFT p99", "ITL p50", "lat p99"}}
	for _, m := range models {
		dist := func(t metrics.Tag, p func(metrics.Distribution) float64) string {
			if d, ok := m.Metrics[t]; ok {
				return short(p(d))
			}
			return "-"
		}
		rows = append(rows, []string{m.Model, short(m.Run[metrics.RequestCount]), short(m.Run[metrics.ErrorRequestCount]),
			short(m.Run[metrics.OutputTokenThroughput]), short(m.Run[metrics.RequestThroughput]),
			dist(metrics.TTFT, func(d metrics.Distribution) float64 { return d.P99 }),
			dist(metrics.ITL, func(d metrics.Distribution) float64 { return d.P50 }),
			dist(metrics.RequestLatency, func(d metrics.Distribution) float64 { return d.P99 })})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == 0 {
				fmt.Fprintf(&b, "  %-*s", widths[0], c)
				continue
			}
			fmt.Fprintf(&b, "  %*s", widths[i], c)
		}
		fmt.Fprintln(w, b.String())
	}
}

// consoleSpec says in a line what a server that drafts reported: the
// acceptance length (the requests' mean and every step's), the draft
// acceptance over the run, and each bucket's share of the steps.
func consoleSpec(w io.Writer, s *metrics.Summary) {
	l, ok := s.Metrics[metrics.SpecAcceptanceLength]
	if !ok {
		return
	}
	fmt.Fprintf(w, "Speculative decoding: acceptance length %s (every step alike: %s)", short(l.Avg), short(s.Run[metrics.SpecTokenWeightedAcceptanceLength]))
	if r, ok := s.Run[metrics.SpecOverallDraftAcceptanceRate]; ok {
		fmt.Fprintf(w, ", %s%% of draft tokens accepted", short(r))
	}
	fmt.Fprintf(w, ", over %d requests\n", l.Count)
	if line := metrics.SpecHistogramLine(s.SpecHistogram); line != "" {
		fmt.Fprintln(w, line)
	}
}
