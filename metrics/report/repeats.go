package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/surgebench/surge/metrics/artifact"
	"github.com/surgebench/surge/metrics/stats"
)

// BuildRepeats is the report of repeated runs of one plan
// (--num-profile-runs, as `surge profile --report` and `surge report`
// on its folder draw it): the runs side by side, as Build draws them, then
// their spread (RepeatCharts) at the aggregate's confidence level.
func BuildRepeats(runs []*artifact.Run, level float64) Data {
	d := Build(runs)
	d.Charts = append(d.Charts, RepeatCharts(runs, level)...)
	return d
}

// repeatMetric is a headline metric RepeatCharts draws: its value in a
// run's summary and in a sweep's stage.
type repeatMetric struct {
	tag, name string
	value     func(artifact.Stat) float64
	stage     func(artifact.Stage) float64
}

var repeatMetrics = []repeatMetric{
	{tagTTFT, "TTFT p99", func(s artifact.Stat) float64 { return s.P99 }, func(s artifact.Stage) float64 { return s.TTFT.P99 }},
	{tagITL, "ITL avg", func(s artifact.Stat) float64 { return s.Avg }, func(s artifact.Stage) float64 { return s.ITL.Avg }},
	{tagLatency, "request latency p99", func(s artifact.Stat) float64 { return s.P99 }, func(s artifact.Stage) float64 { return s.Latency.P99 }},
	{"output_token_throughput", "output token throughput", func(s artifact.Stat) float64 { return s.Avg },
		func(s artifact.Stage) float64 { return s.OutputTokenThroughput }},
}

// RepeatCharts draw the spread of repeated runs of one plan
// (--num-profile-runs): per headline metric, each run's value as a point
// against its run number, with the runs' mean and the bounds of its
// Student-t interval at level as lines across them. Runs of a sweep are
// drawn per value instead (repeatStageCharts). Nil for fewer than two runs.
func RepeatCharts(runs []*artifact.Run, level float64) []Chart {
	if len(runs) < 2 {
		return nil
	}
	ci := strconv.FormatFloat(100*level, 'f', -1, 64) + "% CI"
	if out, ok := repeatStageCharts(runs, level, ci); ok {
		return out
	}
	var out []Chart
	for _, m := range repeatMetrics {
		var xs []Num
		var ys []float64
		unit := ""
		for i, r := range runs {
			if r.Summary == nil {
				continue
			}
			st, ok := r.Summary.Metrics[m.tag]
			if !ok {
				continue
			}
			xs, ys, unit = append(xs, Num(i+1)), append(ys, m.value(st)), st.Unit
		}
		if len(ys) < 2 {
			continue
		}
		sp := stats.Describe(ys, level)
		c := Chart{ID: "runs-" + m.tag, Group: "runs", Title: fmt.Sprintf("runs: %s (mean and %s)", m.name, ci),
			XLabel: "run", YLabel: axis(m.name, unit)}
		pts := Series{Label: "each run", Style: Points, X: xs}
		for _, y := range ys {
			pts.Y = append(pts.Y, Num(y))
		}
		ends := []Num{xs[0], xs[len(xs)-1]}
		for _, l := range []struct {
			label string
			y     float64
		}{{"mean", sp.Mean}, {ci + " low", sp.Lo}, {ci + " high", sp.Hi}} {
			c.Series = append(c.Series, Series{Label: l.label, Run: 0, Style: Line, X: ends, Y: []Num{Num(l.y), Num(l.y)}})
		}
		c.Series = append(c.Series, pts)
		out = append(out, c)
	}
	return out
}

// repeatStageCharts draw repeated runs of a sweep per value, as the
// runs' pooled numbers mix the values' loads: per headline metric, against
// the swept value (a point of several parameters: its place, labelled),
// the runs' mean and interval bounds at each value as lines and each
// run's value as a point. Not ok unless every run is a sweep of the same
// values.
func repeatStageCharts(runs []*artifact.Run, level float64, ci string) ([]Chart, bool) {
	var sweeps []*artifact.Run
	for _, r := range runs {
		if r.Summary == nil {
			continue
		}
		if !isSweep(r) || len(sweeps) > 0 && !sameStages(r.Summary.Stages, sweeps[0].Summary.Stages) {
			return nil, false
		}
		sweeps = append(sweeps, r)
	}
	if len(sweeps) < 2 {
		return nil, false
	}
	stages := sweeps[0].Summary.Stages
	labelled := false
	for _, s := range stages {
		labelled = labelled || s.Label != ""
	}
	mode := strings.ReplaceAll(stages[0].Mode, "_", " ")
	xLabel := mode
	if labelled {
		xLabel = "stage"
	}
	var out []Chart
	for _, m := range repeatMetrics {
		unit := sweeps[0].Summary.Metrics[m.tag].Unit
		c := Chart{ID: "runs-" + m.tag, Group: "runs", Title: fmt.Sprintf("runs: %s per %s (mean and %s)", m.name, xLabel, ci),
			XLabel: xLabel, YLabel: axis(m.name, unit)}
		lines := []Series{{Label: "mean", Style: Line}, {Label: ci + " low", Style: Line}, {Label: ci + " high", Style: Line}}
		pts := Series{Label: "each run", Style: Points}
		drawn := false
		for j, s := range stages {
			x := Num(s.Value)
			if labelled {
				x = Num(j + 1)
			}
			var ys []float64
			for _, r := range sweeps {
				if rs := r.Summary.Stages[j]; rs.RequestCount > 0 { // a run failed at this value is left out
					ys = append(ys, m.stage(rs))
					pts.X, pts.Y = append(pts.X, x), append(pts.Y, Num(ys[len(ys)-1]))
				}
			}
			if len(ys) == 0 {
				continue
			}
			if labelled {
				lines[0].Labels = append(lines[0].Labels, s.Label)
			}
			sp := stats.Describe(ys, level)
			for k, y := range []float64{sp.Mean, sp.Lo, sp.Hi} {
				lines[k].X, lines[k].Y = append(lines[k].X, x), append(lines[k].Y, Num(y))
			}
			drawn = drawn || sp.Max != 0 || sp.Min != 0
		}
		if drawn { // a metric the runs did not record (TTFT not streamed) is all zeros
			c.Series = append(lines, pts)
			out = append(out, c)
		}
	}
	return out, true
}

// sameStages says whether two sweeps ran the same values.
func sameStages(a, b []artifact.Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Mode != b[i].Mode || a[i].Value != b[i].Value || a[i].Label != b[i].Label {
			return false
		}
	}
	return true
}
