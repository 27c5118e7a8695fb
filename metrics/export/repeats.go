package export

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics"
	mstats "github.com/surgebench/surge/metrics/stats"
)

// Aggregate file names of repeated runs (AIPerf's, in aggregate/).
const (
	AggregateJSONFile = "profile_export_aiperf_aggregate.json"
	AggregateCSVFile  = "profile_export_aiperf_aggregate.csv"
)

// Repeats are the runs of one plan run several times (--num-profile-runs):
// each run's label ("run_0001") and summary (nil: the run failed to
// produce one), and the confidence level of the intervals.
type Repeats struct {
	Labels    []string
	Summaries []*metrics.Summary
	Level     float64
}

// RepeatMetric is one flattened metric (<tag>_<stat>, as the sweep
// aggregate keys them) over the successful runs.
type RepeatMetric struct {
	Name   string
	Unit   string
	Values []float64 // one per successful run, in run order
	Spread mstats.Spread
}

// ok are the runs with at least one successful request, and the failed
// ones' labels and reasons.
func (r Repeats) ok() (labels []string, sums []*metrics.Summary, failed []failedRun) {
	for i, s := range r.Summaries {
		if s == nil || s.Run[metrics.RequestCount] == 0 {
			msg := "No requests completed"
			if s != nil && s.Run[metrics.ErrorRequestCount] > 0 {
				msg = fmt.Sprintf("All %d requests failed", int64(s.Run[metrics.ErrorRequestCount]))
			}
			failed = append(failed, failedRun{Label: r.Labels[i], Error: msg})
			continue
		}
		labels, sums = append(labels, r.Labels[i]), append(sums, s)
	}
	return labels, sums, failed
}

// Metrics returns every metric the successful runs all have, sorted by
// name, with its spread.
func (r Repeats) Metrics() []RepeatMetric {
	_, sums, _ := r.ok()
	if len(sums) == 0 {
		return nil
	}
	flat := make([]map[string]cellStats, len(sums))
	for i, s := range sums {
		flat[i] = flatten(s)
	}
	var out []RepeatMetric
	for name, c := range flat[0] {
		m := RepeatMetric{Name: name, Unit: c.Unit}
		for _, f := range flat {
			v, ok := f[name]
			if !ok {
				break
			}
			m.Values = append(m.Values, v.Mean)
		}
		if len(m.Values) != len(flat) {
			continue
		}
		m.Spread = mstats.Describe(m.Values, r.Level)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b RepeatMetric) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AggregateJSON writes profile_export_aiperf_aggregate.json as AIPerf's
// confidence aggregate: metadata (aggregation_type "confidence", the run
// counts, failed runs, the level, the run labels) and per metric its
// mean, std, min, max, cv, se, ci_low, ci_high, t_critical and unit.
func AggregateJSON(w io.Writer, r Repeats) error {
	labels, _, failed := r.ok()
	meta := newObject()
	meta.set("aggregation_type", "confidence")
	meta.set("num_profile_runs", len(r.Summaries))
	meta.set("num_successful_runs", len(labels))
	meta.set("failed_runs", append([]failedRun{}, failed...))
	meta.set("confidence_level", r.Level)
	meta.set("run_labels", append([]string{}, labels...))
	ms := newObject()
	for _, m := range r.Metrics() {
		s := m.Spread
		o := newObject()
		for _, kv := range []struct {
			k string
			v float64
		}{{"mean", s.Mean}, {"std", s.Std}, {"min", s.Min}, {"max", s.Max}, {"cv", s.CV}, {"se", s.SE},
			{"ci_low", s.Lo}, {"ci_high", s.Hi}, {"t_critical", s.TCritical}} {
			o.set(kv.k, jsonNum(kv.v))
		}
		o.set("unit", m.Unit)
		ms.set(m.Name, o)
	}
	doc := newObject()
	doc.set("metadata", meta)
	doc.set("metrics", ms)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// jsonNum is v rounded for the file; an infinite cv is written as null.
func jsonNum(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return roundTo(v)
}

// AggregateCSV writes profile_export_aiperf_aggregate.csv: one row per
// metric with its statistics (numbers "%.2f", cv "%.4f"), CRLF line ends.
func AggregateCSV(w io.Writer, r Repeats) error {
	cw := newCSV(w)
	if err := cw.Write([]string{"metric", "unit", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical"}); err != nil {
		return err
	}
	for _, m := range r.Metrics() {
		s := m.Spread
		if err := cw.Write([]string{m.Name, m.Unit, sweepNum(s.Mean, 2), sweepNum(s.Std, 2), sweepNum(s.Min, 2), sweepNum(s.Max, 2),
			sweepNum(s.CV, 4), sweepNum(s.SE, 2), sweepNum(s.Lo, 2), sweepNum(s.Hi, 2), sweepNum(s.TCritical, 4)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// consoleRepeatMetrics are the metrics the console shows with their
// intervals, in order, with their labels.
var consoleRepeatMetrics = []struct{ name, label string }{
	{"request_throughput_avg", "Request throughput"},
	{"output_token_throughput_avg", "Output token throughput"},
	{"time_to_first_token_avg", "TTFT avg"},
	{"time_to_first_token_p50", "TTFT p50"},
	{"time_to_first_token_p99", "TTFT p99"},
	{"inter_token_latency_avg", "ITL avg"},
	{"inter_token_latency_p99", "ITL p99"},
	{"request_latency_avg", "Request latency avg"},
	{"request_latency_p99", "Request latency p99"},
}

// ConsoleRepeats prints the repeated runs' table: each headline metric's
// mean with the interval's half width beside it ("41.2 ms ± 1.3"), its
// coefficient of variation and each run's value, or their range when the
// values would not fit DefaultWidth.
func ConsoleRepeats(w io.Writer, title string, r Repeats) {
	labels, _, failed := r.ok()
	byName := map[string]RepeatMetric{}
	for _, m := range r.Metrics() {
		byName[m.Name] = m
	}
	level := strconv.FormatFloat(100*r.Level, 'f', -1, 64) + "% CI"
	fmt.Fprintf(w, "\n%s\n%s", title, Wrap(fmt.Sprintf("%d runs (%s)", len(r.Summaries), strings.Join(labels, ", ")), 0, 2))
	rows := [][]string{{"metric", "mean ± half the " + level, "cv", "runs"}}
	var ranges []string
	for _, c := range consoleRepeatMetrics {
		m, ok := byName[c.name]
		if !ok || len(m.Values) == 0 {
			continue
		}
		s := m.Spread
		runs := make([]string, len(m.Values))
		for i, v := range m.Values {
			runs[i] = short(v)
		}
		rows = append(rows, []string{c.label, fmt.Sprintf("%s %s ± %s", short(s.Mean), m.Unit, short((s.Hi-s.Lo)/2)),
			fmt.Sprintf("%.1f%%", 100*s.CV), strings.Join(runs, " ")})
		ranges = append(ranges, short(slices.Min(m.Values))+"–"+short(slices.Max(m.Values)))
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	// Every run's value, or their range where those would not fit.
	if widths[0]+widths[1]+widths[2]+6+widths[3] > DefaultWidth {
		rows[0][3] = "runs' range"
		for i, rg := range ranges {
			rows[i+1][3] = rg
		}
	}
	for n, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i == len(row)-1 {
				b.WriteString(c)
				break
			}
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n == 0 {
			fmt.Fprintln(w, strings.Repeat("─", len([]rune(b.String()))))
		}
	}
	for _, f := range failed {
		fmt.Fprintf(w, "%s failed: %s (left out)\n", f.Label, f.Error)
	}
}

// RepeatStage is one value of a repeated sweep: the stage as the stage
// table names it (its mode, value and, for a point of several parameters,
// label) and its summaries over the runs.
type RepeatStage struct {
	Mode  string
	Value float64
	Label string
	Repeats
}

// ConsoleRepeatStages prints a repeated sweep's stage table: per value the
// runs that completed a request there and, over them, the mean ± half the
// interval of output token throughput, TTFT p95 (request latency p95 when
// a value has no TTFT: not streamed) and request throughput. The runs'
// pooled table is not printed for a sweep: its numbers mix the values'
// loads, so their interval describes no load the sweep ran.
func ConsoleRepeatStages(w io.Writer, title string, stages []RepeatStage) {
	if len(stages) == 0 {
		return
	}
	type cell struct{ name, head string }
	lat := cell{"time_to_first_token_p95", "TTFT p95"}
	byStage := make([]map[string]RepeatMetric, len(stages))
	for i, st := range stages {
		byStage[i] = map[string]RepeatMetric{}
		for _, m := range st.Metrics() {
			byStage[i][m.Name] = m
		}
		if _, ok := byStage[i][lat.name]; !ok && len(byStage[i]) > 0 {
			lat = cell{"request_latency_p95", "lat p95"}
		}
	}
	cols := []cell{{"output_token_throughput_avg", "out tok/s"}, lat, {"request_throughput_avg", "req/s"}}
	mode := stages[0].Mode
	if mode == "" {
		mode = "stage"
	}
	// A metric's cells are its mean and half width, the ± aligned.
	type cellText struct{ mean, hw string }
	var rows [][]cellText
	var notes []string
	for i, st := range stages {
		labels, _, failed := st.ok()
		name := stageName(st.Value, st.Label)
		row := []cellText{{mean: name}, {mean: strconv.Itoa(len(labels))}}
		for _, c := range cols {
			m, ok := byStage[i][c.name]
			switch {
			case !ok:
				row = append(row, cellText{mean: "-"})
			case m.Spread.N < 2:
				row = append(row, cellText{mean: sig3(m.Spread.Mean)}) // no interval of one run
			default:
				row = append(row, cellText{sig3(m.Spread.Mean), sig3((m.Spread.Hi - m.Spread.Lo) / 2)})
			}
		}
		rows = append(rows, row)
		for _, f := range failed {
			notes = append(notes, fmt.Sprintf("%s %s: %s failed: %s (left out)", mode, name, f.Label, f.Error))
		}
	}
	header := []string{mode, "runs"}
	for _, c := range cols {
		header = append(header, c.head)
	}
	meanW, hwW := make([]int, len(header)), make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			meanW[i], hwW[i] = max(meanW[i], len([]rune(c.mean))), max(hwW[i], len([]rune(c.hw)))
		}
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = meanW[i]
		if hwW[i] > 0 {
			widths[i] += 3 + hwW[i]
		}
		widths[i] = max(widths[i], len([]rune(h)))
	}
	level := strconv.FormatFloat(100*stages[0].Level, 'f', -1, 64) + "% CI"
	fmt.Fprintf(w, "\n%s\n%d runs (%s)\n", title, len(stages[0].Summaries), strings.Join(stages[0].Labels, ", "))
	fmt.Fprintf(w, "\nStages over the runs: mean ± half the %s (latencies in ms)\n", level)
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", widths[0], header[0])
	for i, h := range header[1:] {
		fmt.Fprintf(&b, "  %*s", widths[i+1], h)
	}
	fmt.Fprintln(w, b.String())
	fmt.Fprintln(w, strings.Repeat("─", len([]rune(b.String()))))
	for _, r := range rows {
		b.Reset()
		fmt.Fprintf(&b, "%-*s", widths[0], r[0].mean)
		for i, c := range r[1:] {
			i++
			cell := fmt.Sprintf("%*s", meanW[i], c.mean)
			if hwW[i] > 0 {
				hw := ""
				if c.hw != "" {
					hw = " ± " + c.hw
				}
				cell += fmt.Sprintf("%-*s", 3+hwW[i], hw)
			}
			fmt.Fprintf(&b, "  %*s", widths[i], cell)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}
